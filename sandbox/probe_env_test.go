package sandbox_test

// probeEnv selects a probe when the test binary runs as the sandboxed command. Each
// probe prints "ok" or the errno name and exits 0, so tests assert on stdout.
const probeEnv = "SANDBOX_TEST_PROBE"
