// Package conformance holds the conformance suites a host runs against its own
// implementations of the ports of package github.com/mcpward/mcpward/ports
// it can replace: the stores (RunTokenStore, RunLocker, RunApprovalStore,
// RunAuditLog) and the policies (RunEgressPolicy, RunAuthenticator,
// RunProcessAuthority, RunWorkspaceTrust). Each suite asserts the words of
// the port's doc comment (sentinels and typed refusals, copies, key
// encoding, atomicity, exclusion, concurrency, visibility across handles and
// processes, what a grant or a refusal must and must not carry), one t.Run
// per behaviour, in the style of testing/fstest, nettest.TestConn and Go
// CDK's drivertest.
//
// # Policy suites
//
// A policy's decisions are the host's: the harness of a policy suite names
// examples the implementation admits and refuses (EgressHarness,
// ProcessAuthorityHarness), or the controls that play the host's, server's
// and issuer's part (AuthenticatorHarness, WorkspaceTrustHarness), and the
// suite checks the contract around them — every refusal a *refusal.Error
// of the port's Class with a lower_snake_case Reason, no secret (userinfo,
// path or query of a URL, an argument, a credential, a challenge) in any
// error, grants that are copies and for the exact request, decisions that
// are pure and stable, and concurrent use that is safe (run the suites with
// -race). Optional harness controls left nil skip the subtests that need
// them, saying so.
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
// Revoke that matches loosely, a refusal that is a plain error or shows the
// URL's query, a grant that aliases its map or is cached by server id, an
// authenticator that retries with the refused credential or does not
// coalesce refusals, workspace facts torn between two decisions, ...), each
// of which must make the named subtest fail.
package conformance
