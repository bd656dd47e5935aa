// Package relaytest provides in-memory frame connections (mux.FrameConn) for tests of the
// relay stack and its users. It is imported only from _test.go files.
//
// Pipe returns two connected ends. Messages are delivered in order through bounded channels
// (a full channel blocks the writer: back-pressure, like a TCP socket). SendText injects a
// non-binary message. Close on either end ends both, as a dropped TCP connection does. Every
// blocking call honours its ctx. Pipes start no goroutines and work inside testing/synctest
// bubbles.
//
// Layers: a stand-in for relay/wsconn below relay/mux (and for the rendezvous and harness
// sockets in their tests). It imports relay/mux (for the FrameConn interface) and relay/frame
// (ErrNonBinary) only; test/deps_test.go checks that no non-test file imports it.
//
// Limits: DefaultCapacity (1024) messages queued per direction; a full queue blocks the
// writer until its ctx ends.
package relaytest
