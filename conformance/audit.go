package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// RunAuditLog runs the ports.AuditLog conformance suite: Records in append
// order, every field kept, the returned slice a copy, and appends from
// concurrent goroutines, several handles and — with a Location and Attach —
// several processes all kept, each record whole and each writer's records in
// its order. When the log is a ports.AuditQueue, Enqueue keeps the call
// order with Append, loses nothing under concurrency, and Flush makes every
// enqueued record stored.
//
// mk is called once per subtest and must return a Harness on a fresh, empty
// backing store; every handle its Open returns must share that store. See
// RunTokenStore for an example and the package doc for cross-process
// subtests.
func RunAuditLog(t *testing.T, mk func(t *testing.T) Harness[ports.AuditLog]) {
	s := newSuite(t, "auditlog", mk)
	if runChild(t, s, auditRoles) {
		return
	}
	as := auditSuite{s}
	t.Run("RecordsEmpty", as.empty)
	t.Run("AppendThenRecords", as.appendThenRecords)
	t.Run("AppendKeepsEveryField", as.keepsEveryField)
	t.Run("AppendOrder", as.order)
	t.Run("RecordsReturnsCopy", as.returnsCopy)
	t.Run("CrossHandle", as.crossHandle)
	t.Run("ConcurrentAppends", as.concurrentAppends)
	t.Run("CrossProcessAppends", as.crossProcessAppends)
	t.Run("QueueOrderAndFlush", as.queueOrderAndFlush)
	t.Run("QueueConcurrent", as.queueConcurrent)
}

// queue returns l as a ports.AuditQueue, skipping t when it is not one.
func queue(t *testing.T, l ports.AuditLog) ports.AuditQueue {
	t.Helper()
	q, ok := l.(ports.AuditQueue)
	if !ok {
		t.Skip("not a ports.AuditQueue")
	}
	return q
}

// queueOrderAndFlush: records enqueued and appended through one handle are
// stored in call order, and after Flush every enqueued record is visible
// through another handle.
func (s auditSuite) queueOrderAndFlush(t *testing.T) {
	h := s.harness(t)
	q := queue(t, h.Open(t))
	other := h.Open(t)
	var want []ports.AuditRecord
	for i := range 12 {
		r := record(fmt.Sprintf("q%d", i), baseTime.Add(time.Duration(i)*time.Second))
		if i%3 == 2 {
			require.NoError(t, q.Append(t.Context(), r))
		} else {
			require.NoError(t, q.Enqueue(r))
		}
		want = append(want, r)
	}
	tail := record("tail", baseTime)
	require.NoError(t, q.Enqueue(tail))
	want = append(want, tail)
	require.NoError(t, q.Flush(t.Context()))
	assertRecords(t, want, mustRecords(t, other), "Append and Enqueue keep their call order; Flush makes every enqueued record stored")
	require.NoError(t, q.Flush(t.Context()), "a Flush with nothing enqueued")
}

// queueConcurrent: goroutines enqueuing and appending through one handle
// lose nothing, and each keeps its order.
func (s auditSuite) queueConcurrent(t *testing.T) {
	h := s.harness(t)
	q := queue(t, h.Open(t))
	const writers, each = 6, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := record(fmt.Sprintf("w%d/%d", w, i), baseTime)
				if (w+i)%2 == 0 {
					assert.NoError(t, q.Enqueue(r))
				} else {
					assert.NoError(t, q.Append(t.Context(), r))
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, q.Flush(t.Context()))
	next := make([]int, writers)
	for _, r := range mustRecords(t, h.Open(t)) {
		var w, i int
		_, err := fmt.Sscanf(r.Reason, "w%d/%d", &w, &i)
		require.NoError(t, err, "a record kept whole")
		require.Equal(t, next[w], i, "writer %d's records in its order", w)
		next[w]++
	}
	for w := range writers {
		assert.Equal(t, each, next[w], "every record of writer %d kept", w)
	}
}

type auditSuite struct{ *suite[ports.AuditLog] }

// record returns a full record whose Reason is reason.
func record(reason string, at time.Time) ports.AuditRecord {
	return ports.AuditRecord{
		Time: at, Action: ports.AuditDecide, Identity: identity("srv"),
		Outcome: "allowed", Reason: reason, Actor: "host",
	}
}

func assertRecords(t *testing.T, want, got []ports.AuditRecord, msgAndArgs ...any) bool {
	t.Helper()
	if !assert.Len(t, got, len(want), msgAndArgs...) {
		return false
	}
	ok := true
	for i := range want {
		w, g := want[i], got[i]
		ok = assert.True(t, w.Time.Equal(g.Time), "record %d Time: want %v, got %v", i, w.Time, g.Time) && ok
		w.Time, g.Time = time.Time{}, time.Time{}
		ok = assert.Equal(t, w, g, "record %d", i) && ok
	}
	return ok
}

func mustRecords(t *testing.T, l ports.AuditLog) []ports.AuditRecord {
	t.Helper()
	got, err := l.Records(t.Context())
	require.NoError(t, err, "Records")
	return got
}

func (s auditSuite) empty(t *testing.T) {
	l := s.harness(t).Open(t)
	assert.Empty(t, mustRecords(t, l), "Records of an empty log")
}

func (s auditSuite) appendThenRecords(t *testing.T) {
	l := s.harness(t).Open(t)
	r := record("approved", baseTime)
	require.NoError(t, l.Append(t.Context(), r))
	assertRecords(t, []ports.AuditRecord{r}, mustRecords(t, l))
}

func (s auditSuite) keepsEveryField(t *testing.T) {
	l := s.harness(t).Open(t)
	odd := "line\nbreak \"quoted\" \\ tab\t nul\x00 \u00e9\u65e5\U0001F600 {\"time\":1}\n"
	want := []ports.AuditRecord{
		{
			Time: baseTime, Action: ports.AuditGrant, Outcome: "granted", Reason: odd, Actor: odd,
			Identity: ports.Identity{
				ServerID: odd, Tier: ports.TierPlugin, Origin: odd, Fingerprint: "ff",
				Security: odd, Repository: odd, Generation: odd,
			},
		},
		{Time: time.Date(2024, 1, 2, 3, 4, 5, 1, time.UTC), Action: ports.AuditRevoke, Outcome: "revoked"},
		{Action: ports.AuditDecide, Outcome: "denied", Identity: identity("x")},
	}
	for _, r := range want {
		require.NoError(t, l.Append(t.Context(), r))
	}
	assertRecords(t, want, mustRecords(t, l), "every field of every record is kept")
}

func (s auditSuite) order(t *testing.T) {
	l := s.harness(t).Open(t)
	var want []ports.AuditRecord
	for i := range 20 {
		// Times go backwards: append order, not time order, is kept.
		r := record(fmt.Sprintf("r%d", i), baseTime.Add(-time.Duration(i)*time.Second))
		require.NoError(t, l.Append(t.Context(), r))
		want = append(want, r)
	}
	assertRecords(t, want, mustRecords(t, l), "Records returns records in append order")
}

func (s auditSuite) returnsCopy(t *testing.T) {
	l := s.harness(t).Open(t)
	r := record("r", baseTime)
	require.NoError(t, l.Append(t.Context(), r))
	got := mustRecords(t, l)
	require.Len(t, got, 1)
	got[0].Reason = "changed"
	got[0].Identity.ServerID = "changed"
	assertRecords(t, []ports.AuditRecord{r}, mustRecords(t, l), "changing what Records returned must not change the log")
}

func (s auditSuite) crossHandle(t *testing.T) {
	h := s.harness(t)
	a, b := h.Open(t), h.Open(t)
	r1, r2 := record("r1", baseTime), record("r2", baseTime)
	require.NoError(t, a.Append(t.Context(), r1))
	require.NoError(t, b.Append(t.Context(), r2))
	assertRecords(t, []ports.AuditRecord{r1, r2}, mustRecords(t, a), "appends through every handle are visible through each")
	assertRecords(t, []ports.AuditRecord{r1, r2}, mustRecords(t, b), "appends through every handle are visible through each")
}

// appendMany appends n records with Reason "<tag>/<i>".
func appendMany(t testing.TB, l ports.AuditLog, tag string, n int) error {
	for i := range n {
		if err := l.Append(t.Context(), record(fmt.Sprintf("%s/%d", tag, i), baseTime)); err != nil {
			return fmt.Errorf("Append %s/%d: %w", tag, i, err)
		}
	}
	return nil
}

// assertAppended checks that the log holds exactly n whole records from
// each tag, each tag's in its append order.
func assertAppended(t *testing.T, l ports.AuditLog, tags []string, n int) {
	t.Helper()
	next := map[string]int{}
	for _, tag := range tags {
		next[tag] = 0
	}
	for i, r := range mustRecords(t, l) {
		if !assertRecords(t, []ports.AuditRecord{record(r.Reason, baseTime)}, []ports.AuditRecord{r}, "record %d is not whole", i) {
			continue
		}
		tag, num, _ := strings.Cut(r.Reason, "/")
		k, err := strconv.Atoi(num)
		want, known := next[tag]
		if !assert.True(t, err == nil && known, "record %d has an unexpected Reason %q", i, r.Reason) {
			continue
		}
		assert.Equal(t, want, k, "record %d: %s's records are out of append order, or one was lost or repeated", i, tag)
		next[tag] = k + 1
	}
	for _, tag := range tags {
		assert.Equal(t, n, next[tag], "records appended by %s: appends were lost", tag)
	}
}

func (s auditSuite) concurrentAppends(t *testing.T) {
	h := s.harness(t)
	handles := []ports.AuditLog{h.Open(t), h.Open(t)}
	const workers, n = 8, 20
	var tags []string
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		tag := fmt.Sprintf("w%d", w)
		tags = append(tags, tag)
		wg.Go(func() {
			if err := appendMany(t, handles[w%len(handles)], tag, n); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assertAppended(t, handles[0], tags, n)
}

// auditRoles are the roles of an AuditLog child process.
var auditRoles = map[string]childRole[ports.AuditLog]{
	// append says "ready", waits for its standard input to end, appends N
	// records with Reason "<ID>/<i>" and says "done".
	"append": func(t *testing.T, l ports.AuditLog, a childArg) {
		awaitGo()
		require.NoError(t, appendMany(t, l, a.ID, a.N))
		say("done")
	},
}

func (s auditSuite) crossProcessAppends(t *testing.T) {
	h := s.harness(t)
	crossProcess(t, h)
	const n = 25
	tags := []string{"child0", "child1", "parent"}
	children := startReady(t, s.suite, "append", h.Location, []childArg{{ID: tags[0], N: n}, {ID: tags[1], N: n}})
	l := h.Open(t)
	require.NoError(t, appendMany(t, l, "parent", n))
	for _, c := range children {
		c.expect("done", childWait)
		c.finish(childWait)
	}
	assertAppended(t, l, tags, n)
}
