package conformance

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReference runs every suite against the correct reference
// implementations: all must pass (cross-process subtests skip for the
// in-memory ones and run for the file ones).
func TestReference(t *testing.T) {
	t.Run("MemTokenStore", func(t *testing.T) { RunTokenStore(t, memTokenHarness("")) })
	t.Run("FileTokenStore", func(t *testing.T) { RunTokenStore(t, fileTokenHarness) })
	t.Run("MemLocker", func(t *testing.T) { RunLocker(t, memLockerHarness("")) })
	t.Run("FileLocker", func(t *testing.T) { RunLocker(t, fileLockerHarness("")) })
	t.Run("MemApprovalStore", func(t *testing.T) { RunApprovalStore(t, memApprovalHarness("")) })
	t.Run("FileApprovalStore", func(t *testing.T) { RunApprovalStore(t, fileApprovalHarness("")) })
	t.Run("MemAuditLog", func(t *testing.T) { RunAuditLog(t, memAuditHarness("")) })
	t.Run("FileAuditLog", func(t *testing.T) { RunAuditLog(t, fileAuditHarness("")) })
}

// broken is a deliberately broken implementation and the subtest of its
// suite that must fail because of it.
type broken struct {
	name    string // "<suite>/<bug>"
	subtest string
	run     func(t *testing.T)
}

func tokens(bug, subtest string) broken {
	return broken{"tokenstore/" + bug, subtest, func(t *testing.T) { RunTokenStore(t, memTokenHarness(bug)) }}
}

func lockers(bug, subtest string) broken {
	return broken{"locker/" + bug, subtest, func(t *testing.T) { RunLocker(t, memLockerHarness(bug)) }}
}

func approvals(bug, subtest string) broken {
	return broken{"approvalstore/" + bug, subtest, func(t *testing.T) { RunApprovalStore(t, memApprovalHarness(bug)) }}
}

func audits(bug, subtest string) broken {
	return broken{"auditlog/" + bug, subtest, func(t *testing.T) { RunAuditLog(t, memAuditHarness(bug)) }}
}

// brokenImpls lists one broken implementation per behaviour.
var brokenImpls = []broken{
	tokens("get-missing-nil", "GetMissingIsErrNotFound"),
	tokens("set-noop", "SetThenGet"),
	tokens("value-cut-at-nul", "BinaryValue"),
	tokens("overwrite-keeps-old", "Overwrite"),
	tokens("delete-noop", "Delete"),
	tokens("delete-missing-nil", "DeleteMissingIsErrNotFound"),
	tokens("get-aliases", "GetReturnsCopy"),
	tokens("set-aliases", "SetKeepsCopy"),
	tokens("empty-is-delete", "EmptyValue"),
	tokens("small-value-limit", "MaxValueLen"),
	tokens("oversize-wrong-error", "OversizeValue"),
	tokens("accepts-empty-key", "InvalidKeys"),
	tokens("rejects-max-key", "MaxKeyLen"),
	tokens("key-fold-case", "KeysAreDistinct"),
	tokens("key-slash-escape", "KeysAreDistinct"),
	tokens("key-cut-at-nul", "KeysAreDistinct"),
	tokens("key-truncate", "KeysAreDistinct"),
	tokens("key-sanitize-utf8", "KeysAreDistinct"),
	tokens("key-clean-path", "KeysAreDistinct"),
	tokens("handles-not-shared", "CrossHandle"),
	tokens("lost-writes", "ConcurrentDistinctKeys"),
	tokens("non-atomic-set", "ConcurrentSameKey"),
	tokens("location-not-shared", "CrossProcess"),

	lockers("unlock-errors", "LockAndUnlock"),
	lockers("one-global-lock", "DifferentKeysIndependent"),
	lockers("no-exclusion", "ExcludesGoroutines"),
	lockers("handles-not-shared", "ExcludesHandles"),
	lockers("unlock-not-idempotent", "UnlockIsIdempotent"),
	lockers("no-wait", "WaiterGetsLockAfterUnlock"),
	lockers("ignores-ctx", "DeadlineIsErrLockTimeout"),
	lockers("ignores-ctx", "CancelIsErrLockTimeout"),
	lockers("timeout-not-sentinel", "DeadlineIsErrLockTimeout"),
	lockers("timeout-hides-ctx-err", "DeadlineIsErrLockTimeout"),
	lockers("timeout-hides-ctx-err", "CancelIsErrLockTimeout"),
	lockers("reentrant", "NotReentrant"),
	lockers("key-fold-case", "KeysAreDistinct"),
	lockers("key-truncate", "KeysAreDistinct"),
	lockers("key-cut-at-nul", "KeysAreDistinct"),
	lockers("accepts-empty-key", "InvalidKeys"),
	lockers("rejects-max-key", "InvalidKeys"),
	lockers("location-not-shared", "CrossProcessExclusion"),
	lockers("location-not-shared", "CrossProcessMutualExclusion"),
	{"locker/file-stale-on-kill", "KilledHolderReleasesLock", func(t *testing.T) { RunLocker(t, fileLockerHarness("stale-on-kill")) }},

	approvals("list-none-not-found", "ListEmpty"),
	approvals("grant-drops-granted-by", "GrantThenList"),
	approvals("grant-replaces-loose", "IdentitiesDifferingInOneFieldAreDistinct"),
	approvals("revoke-loose", "RevokeRemovesExactIdentity"),
	approvals("list-prefix", "ListFiltersByServerID"),
	approvals("list-fold-case", "ListFiltersByServerID"),
	approvals("list-newest-first", "ListOldestFirst"),
	approvals("grant-duplicates", "GrantIdenticalReplaces"),
	approvals("grant-drops-nanos", "GrantKeepsEveryField"),
	approvals("revoke-loose", "RevokeNearMissIsErrNotFound"),
	approvals("revoke-missing-nil", "RevokeMissingIsErrNotFound"),
	approvals("list-aliases", "ListReturnsCopy"),
	approvals("handles-not-shared", "CrossHandle"),
	approvals("lost-grants", "ConcurrentGrants"),
	approvals("lost-grants", "ConcurrentGrantsAndRevokes"),
	{"approvalstore/file-no-lock", "CrossProcessGrants", func(t *testing.T) { RunApprovalStore(t, fileApprovalHarness("no-lock")) }},

	audits("records-none-not-found", "RecordsEmpty"),
	audits("drops-actor", "AppendThenRecords"),
	audits("sorted-by-time", "AppendOrder"),
	audits("drops-actor", "AppendKeepsEveryField"),
	audits("records-aliases", "RecordsReturnsCopy"),
	audits("handles-not-shared", "CrossHandle"),
	audits("lost-appends", "ConcurrentAppends"),
	{"auditlog/file-seek-append", "CrossProcessAppends", func(t *testing.T) { RunAuditLog(t, fileAuditHarness("seek-append")) }},
}

// allBroken lists the broken implementations of every suite.
func allBroken() []broken { return append(slices.Clone(brokenImpls), portBrokenImpls...) }

// envBroken names the broken implementation TestBrokenChild runs.
const envBroken = "MCPWARD_CONFORMANCE_TEST_BROKEN"

// TestBrokenChild runs one suite against the broken implementation named by
// envBroken. TestBroken runs it in a child process; alone it skips.
func TestBrokenChild(t *testing.T) {
	name := os.Getenv(envBroken)
	if name == "" {
		t.Skip("run by TestBroken in a child process")
	}
	for _, b := range allBroken() {
		if b.name == name {
			b.run(t)
			return
		}
	}
	t.Fatalf("no broken implementation %q", name)
}

// TestBroken proves each subtest can fail: it runs the subtest against the
// broken implementation made for it, in a child process (a failing subtest
// fails its whole process), and requires the child to fail naming exactly
// that subtest.
func TestBroken(t *testing.T) {
	if os.Getenv(envBroken) != "" || os.Getenv(envRole) != "" {
		t.Skip("in a child process")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, b := range allBroken() {
		t.Run(b.name+"/"+b.subtest, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(exe, "-test.run=^TestBrokenChild$/^"+regexp.QuoteMeta(b.subtest)+"$", "-test.v", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), envBroken+"="+b.name,
				"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child must fail; its output:\n%s", out)
			assert.Contains(t, string(out), "--- FAIL: TestBrokenChild/"+b.subtest+" ",
				"subtest %s must fail against %s", b.subtest, b.name)
			assert.NotContains(t, string(out), "panic: test timed out", "the suite must fail, not hang")
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}
