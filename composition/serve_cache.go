package composition

import (
	"sync"
	"time"

	"github.com/mcpward/mcpward/adapters/mcpsession/mcpserve"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// Caching hints through the live set (protocol 2026-07-28 and later). A
// list or read serve answers carries a ttlMs derived from the fronted
// servers' own hints:
//
//   - 0 (and cacheScope "private") while any fronted server is connecting
//     or reconnecting (its tools are about to appear or change), when
//     any connected server's catalog is stale (a refresh failed) or
//     carries no hint for that list (a legacy server promises nothing),
//     and when no server is connected;
//   - otherwise the shortest time any connected server's window has
//     left, its window being its hint cut to the host's own refresh bound
//     (supervisor.DefaultCacheTTLMax: the supervisor lists again at the
//     latest then), counted from when the Gateway first saw that catalog
//     (a change replaces the catalog, so its window starts again);
//     "public" only when every one of those hints is public.
//
// So no hint serve hands out outlives the window any fronted server
// promised for its list, nor the refresh the host would make at its
// bound. A change no one can foresee (a server's process dies, the user
// edits the configuration or approves a server) is announced by
// list_changed; a client that cached a list meanwhile has a call of a
// tool that went away refused by name.

// catalogClock remembers when the Gateway first saw each catalog of the
// live set.
type catalogClock struct {
	mu   sync.Mutex
	seen map[*catalog.Catalog]time.Time
}

// observe records now for each catalog of cats not seen before and
// forgets those no longer in cats; it returns each catalog's first-seen
// time.
func (c *catalogClock) observe(cats []*catalog.Catalog, now time.Time) map[*catalog.Catalog]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*catalog.Catalog]time.Time, len(cats))
	for _, cat := range cats {
		t, ok := c.seen[cat]
		if !ok {
			t = now
		}
		next[cat] = t
	}
	c.seen = next
	return next
}

// cacheView is one fronted server's part of a caching hint.
type cacheView struct {
	state State
	cat   *catalog.Catalog // its current catalog, nil when none
	since time.Time        // when the Gateway first saw cat
}

// liveHint is the hint of a list of kind at now over views, bounded by
// bound: the TTL and whether it is private (see the comment above).
func liveHint(views []cacheView, kind ports.ListKind, now time.Time, bound time.Duration) (time.Duration, bool) {
	ttl, private, counted := bound, false, 0
	for _, v := range views {
		switch v.state {
		case StateConnected:
		case StateConnecting:
			return 0, true
		default:
			continue // failed, refused, closed: nothing of it is offered
		}
		if v.cat == nil || v.cat.Stale {
			return 0, true
		}
		h, ok := v.cat.Cache[kind]
		if !ok {
			return 0, true
		}
		// The host lists again at its bound at the latest (and sooner
		// at the hint): the window ends at the earlier.
		left := v.since.Add(min(h.TTL, bound)).Sub(now)
		if left <= 0 {
			return 0, true
		}
		ttl = min(ttl, left)
		private = private || h.Private
		counted++
	}
	if counted == 0 || ttl <= 0 {
		return 0, true
	}
	return ttl, private
}

// CacheHint returns the caching hint of a list (or read) of kind: see
// the comment above.
func (b gatewayBackend) CacheHint(kind ports.ListKind) (time.Duration, bool) {
	g := b.g
	gen := g.f.Current()
	if gen.Set == nil || gen.Closed {
		return 0, true
	}
	now := g.now()
	cats := gen.Set.Catalogs()
	seen := g.clock.observe(cats, now)
	byServer := make(map[string]*catalog.Catalog, len(cats))
	for _, c := range cats {
		byServer[c.Server] = c
	}
	var views []cacheView
	for _, st := range g.f.Servers() {
		if g.only != "" && st.Name != g.only {
			continue
		}
		v := cacheView{state: st.State, cat: byServer[st.Name]}
		if v.cat != nil {
			v.since = seen[v.cat]
		}
		views = append(views, v)
	}
	return liveHint(views, kind, now, supervisor.DefaultCacheTTLMax)
}

var _ mcpserve.CacheHints = gatewayBackend{}
