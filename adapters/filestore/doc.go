// Package filestore keeps mcpward's tokens, approvals, audit trail and
// cross-process locks in one private directory on the local filesystem.
//
// A *Store returned by Open implements ports.TokenStore, ports.Locker,
// ports.ApprovalStore and ports.AuditLog (a ports.AuditQueue). Every Store opened on the same
// directory, in this process or another, shares one backing store.
//
// # Directory
//
// Open creates the directory (mode 0700, whatever the umask) when it is
// missing; its parent must exist. An existing directory, and each
// subdirectory below, is used only when it is a real directory (not a
// symlink), owned by the effective user and not accessible to group or
// others; otherwise Open returns a *DirError (wrapping ports.ErrUnavailable)
// and changes nothing. Files are created with mode 0600, whatever the umask.
// The Store holds the directory open (os.Root), so later operations cannot be
// redirected elsewhere by a rename or a symlink.
//
// Layout:
//
//	<dir>/                  0700
//	  tokens/<name>         0600  one file per TokenStore key
//	  locks/<name>          0600  one lock file per Locker key, never deleted
//	  approvals.json        0600  every approval, rewritten atomically
//	  approvals.lock        0600  flock serializing approval updates
//	  audit.jsonl           0600  the audit log, one JSON record per line
//	  audit.lock            0600  flock serializing audit appends and reads
//	  .tmp-*, tokens/.tmp-*       temporary files of in-flight writes
//
// # Key names
//
// A key (any 1 to ports.MaxKeyLen bytes) becomes a file name as follows:
// a key of at most 150 bytes is "k" followed by its unpadded lowercase
// base32 encoding (RFC 4648 alphabet, at most 241 characters); a longer key
// is "h" followed by the lowercase hex SHA-256 of the key (65 characters).
// Names use only [a-z2-7] and [0-9a-f], never '/', '.', or NUL, fit
// NAME_MAX (255), and stay distinct on case-insensitive filesystems. The
// mapping is injective for short keys and collision-resistant for long ones;
// in both cases the token file also holds the key itself, which Get and Set
// check, so two keys never alias (a mismatch is ports.ErrCorrupt).
//
// # Token files
//
// A token file is: the 8 bytes "MCPWTOK1", the key length (uint32, big
// endian), the key, the value length (uint32, big endian), the value, and
// the SHA-256 of everything before it. Any other content, a file that is
// not a regular file, or one that exists but cannot be read is corrupt.
// Set never replaces a corrupt file (it returns ports.ErrCorrupt, a
// deliberate addition to the TokenStore contract: repairing is the caller's
// decision); Delete, an explicit request, removes whatever file is there.
//
// # Atomicity
//
// Every file that is replaced (token files, approvals.json) is written to a
// temporary file in the same directory, fsynced, renamed over the target,
// and the directory is fsynced: a reader sees the old content or the new,
// never a mix. Temporary files left by a crash are ignored, never read and
// never removed (one may belong to a write in progress in another process).
//
// # Approvals and audit
//
// Grant and Revoke read, modify and rewrite approvals.json while holding an
// exclusive flock on approvals.lock, so concurrent writers in several
// processes lose nothing; List reads without the lock (the file is replaced
// atomically). A corrupt approvals.json makes List, Grant and Revoke return
// ports.ErrCorrupt and is never replaced.
//
// Append writes each record as one line, in one write, under an exclusive
// flock on audit.lock, and fsyncs it before it returns; the records of
// concurrent Appends of one Store that wait while a write is being synced
// go out together in the next write and share its fsync (group commit).
// Enqueue (ports.AuditQueue) puts a record in the same pending batch
// without waiting: it goes out with the next write, a later Append's or
// the Store's own at most 5ms after, and is durable after that write's
// fsync; Flush and Close wait for it. Records of one Store are written in
// the order of its Append and Enqueue calls.
// Records reads under a shared flock.
// When a line cannot be decoded (including a final line torn by a crash),
// Records returns ports.ErrCorrupt and no records, while Append still
// appends: the log is append-only, so appending loses nothing, and a torn
// final line is first ended with a newline so the new record stays whole.
//
// Strings in approvals and audit records are stored as JSON strings when
// they are valid UTF-8 and as {"b64": base64} otherwise, so every byte
// string round-trips exactly. Times round-trip to the nanosecond with their
// offset (compare them with time.Time.Equal).
//
// # Locks
//
// Lock takes flock(LOCK_EX|LOCK_NB) on a fresh descriptor of
// locks/<name> and polls with a short backoff (1ms doubling to 25ms) until it
// succeeds or ctx ends. The kernel releases a flock when its holder exits,
// even by SIGKILL. Lock files are never deleted: deleting one while another
// process holds or waits on it would let a third process lock a new file of
// the same name and break exclusion. One empty file per key used is the
// price.
//
// # Errors
//
// Errors wrap the ports sentinels with fixed phrases. They never contain a
// key, a value, a path or the text of an operating-system error.
//
// # Platforms
//
// The Store works on Linux, macOS and the BSDs. On other systems Open
// returns ErrUnsupportedPlatform (wrapping ports.ErrUnavailable).
package filestore
