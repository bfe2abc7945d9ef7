// Package conformance holds the conformance suites a host runs against its own
// implementations of the store ports of package
// github.com/mcpward/mcpward/ports: RunTokenStore, RunLocker,
// RunApprovalStore and RunAuditLog. Each suite asserts the words of the
// port's doc comment (sentinels, copies, key encoding, atomicity, exclusion,
// concurrency, visibility across handles and processes), one t.Run per
// behaviour, in the style of testing/fstest, nettest.TestConn and Go CDK's
// drivertest.
//
// # Using a suite
//
// A host calls a suite from a test of its own, with a harness maker:
//
//	func TestLocker(t *testing.T) {
//		conformance.RunLocker(t, func(t *testing.T) conformance.Harness[ports.Locker] {
//			dir := t.TempDir()
//			open := func(t *testing.T, dir string) ports.Locker {
//				l, err := mystore.NewLocker(dir)
//				require.NoError(t, err)
//				return l
//			}
//			return conformance.Harness[ports.Locker]{
//				Open:     func(t *testing.T) ports.Locker { return open(t, dir) },
//				Location: dir,
//				Attach:   open,
//			}
//		})
//	}
//
// The suite calls the maker once per subtest, and each call must return a
// Harness on a fresh, empty backing store (a new temporary directory, a
// keychain service name of its own, a new in-memory store). Every handle
// Open returns from one Harness must share that one backing store: the suites
// write through one handle and read through another. Release resources with
// t.Cleanup inside the maker or Open.
//
// # Cross-process subtests
//
// Some behaviours only show between OS processes: a Locker excludes holders
// in other processes, and a holder killed with SIGKILL releases its locks; a
// TokenStore value is visible to other processes; grants and audit records
// from several processes are never lost. A harness opts in by setting
// Location (an opaque string naming its backing store, such as a directory)
// and Attach. A harness that cannot cross processes (an in-memory fake)
// leaves Location empty, and those subtests skip saying so.
//
// The suite starts child processes by re-executing the current test binary
// (os.Executable) with -test.run anchored at the exact name of the test that
// called the suite (for example ^TestStore$/^Locker$), with environment
// variables MCPWARD_CONFORMANCE_CHILD_* naming the suite, that test, the
// child's role, the Location and the role's arguments. In the child, the
// same test function runs again, reaches the same Run call, and that call
// sees the variables: it calls the harness maker once (its own fresh backing
// store goes unused), calls Attach with the parent's Location, performs its
// role (hold a lock until told, try a lock, count under the lock, set a
// value, grant, append), reports on standard output and ends the test with
// t.SkipNow. So a host needs nothing beyond the harness, with two rules:
//
//   - call each suite from its own test or subtest, so the child runs no
//     other code of that test before reaching the suite (code after the call
//     never runs in the child);
//   - do not run the suite from TestMain or from a goroutine other than the
//     test's own.
//
// Cross-process subtests need a Unix-like system (SIGKILL); elsewhere they
// skip.
//
// # Trusting the suites
//
// The tests of this module run every suite against correct reference
// implementations (in memory and on files, which must pass) and against one
// deliberately broken implementation per behaviour (an aliased slice, a
// Delete of a missing key returning nil, a key encoding that folds case or
// cuts at NUL, a non-atomic Set, a Locker that does not exclude or ignores
// ctx, a lock file a killed holder leaves behind, lost concurrent writes, a
// Revoke that matches loosely, ...), each of which must make the named
// subtest fail.
package conformance
