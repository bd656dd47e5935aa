// Package rustutf8 holds Rust's UTF-8 rules where the reference's texts depend on them:
// Lossy is String::from_utf8_lossy (each maximal invalid subpart becomes one U+FFFD;
// fs/readDirectory and fs/walk names), and ErrorText renders str::from_utf8's Utf8Error
// (capability discovery's warning for a file that is not UTF-8). Both read the one table
// of lead bytes and allowed second bytes (lead, Unicode table 3-7, as
// core::str::validations applies it).
//
// Layers: a leaf (standard library only); imported by executor/fs and
// executor/capdiscover. Pure functions, safe for concurrent use; no limits of its own
// (the work is linear in the input).
package rustutf8
