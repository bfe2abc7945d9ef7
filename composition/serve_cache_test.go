package composition

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

// simServer is one fronted server of a simulated live set.
type simServer struct {
	state   State
	cat     *catalog.Catalog
	arrived time.Time // when cat arrived
}

// TestLiveHintNeverOutlivesAChange drives generated sequences of live-set
// changes (servers connecting, reconnecting, failing, their lists
// changing or going stale, the host refreshing at its bound) on a clock,
// with the Gateway's follower observing each new set as it comes, and
// asks for hints at random moments. Whatever the sequence: no hint handed
// out is positive while a server connects or a catalog is stale; none
// reaches past a change of a server's list made when its own hint allowed
// it, nor past the host's refresh bound, unless something no one can
// foresee came first (a session ended, a server failed, the user acted:
// then the lists are announced changed by list_changed); and hints are
// not all 0 (the rule is not "always 0").
func TestLiveHintNeverOutlivesAChange(t *testing.T) {
	const bound = time.Hour
	kinds := []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}
	positive := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		now := time.Unix(1_800_000_000, 0)
		servers := make([]*simServer, 1+r.IntN(4))
		for i := range servers {
			servers[i] = &simServer{state: StateConnecting}
		}
		var clock catalogClock
		newCatalog := func(i int) *catalog.Catalog {
			c := &catalog.Catalog{Server: string(rune('a' + i))}
			if r.IntN(6) > 0 { // some servers are legacy: no hints
				c.Cache = map[ports.ListKind]ports.CacheHint{}
				for _, k := range kinds {
					if r.IntN(8) > 0 {
						c.Cache[k] = ports.CacheHint{TTL: time.Duration(r.IntN(3*3600)) * time.Second, Private: r.IntN(2) == 0}
					}
				}
			}
			return c
		}
		set := func() []*catalog.Catalog {
			var cats []*catalog.Catalog
			for _, s := range servers {
				if s.cat != nil {
					cats = append(cats, s.cat)
				}
			}
			return cats
		}
		follow := func() { clock.observe(set(), now) } // the Gateway's follower, after each change
		type hint struct {
			at  time.Time
			ttl time.Duration
		}
		var hints []hint
		var changes []time.Time // list changes a server's own hint allowed
		var breaks []time.Time  // what no one can foresee: a session ends, a server fails
		for range 200 {
			now = now.Add(time.Duration(r.IntN(900)) * time.Second)
			i := r.IntN(len(servers))
			s := servers[i]
			switch r.IntN(6) {
			case 0: // connects (or reconnects) with a new catalog
				if s.state == StateFailed {
					breaks = append(breaks, now) // the user acted (a retry, an approval)
				}
				if s.state != StateConnected {
					s.state, s.cat, s.arrived = StateConnected, newCatalog(i), now
					follow()
				}
			case 1: // its session ends: reconnecting, catalog retained stale
				if s.state == StateConnected {
					breaks = append(breaks, now)
					s.state = StateConnecting
					if s.cat != nil {
						c := *s.cat
						c.Stale = true
						s.cat = &c
					}
					follow()
				}
			case 2: // its list changes, once every hint it gave allows it
				if s.state == StateConnected {
					ok := true
					for _, h := range s.cat.Cache {
						ok = ok && !now.Before(s.arrived.Add(h.TTL))
					}
					if s.cat.Cache == nil || ok {
						s.cat, s.arrived = newCatalog(i), now
						changes = append(changes, now)
						follow()
					}
				}
			case 3: // the host refreshes at its bound
				if s.state == StateConnected && !now.Before(s.arrived.Add(bound)) {
					s.cat, s.arrived = newCatalog(i), now
					changes = append(changes, now)
					follow()
				}
			case 4: // fails for good (the user must act)
				if r.IntN(4) == 0 {
					breaks = append(breaks, now)
					s.state, s.cat = StateFailed, nil
					follow()
				}
			default: // a client asks
				seen := clock.observe(set(), now)
				var views []cacheView
				anyConnecting, anyStale := false, false
				for _, s := range servers {
					v := cacheView{state: s.state, cat: s.cat}
					if s.cat != nil {
						v.since = seen[s.cat]
						anyStale = anyStale || (s.state == StateConnected && s.cat.Stale)
					}
					anyConnecting = anyConnecting || s.state == StateConnecting
					views = append(views, v)
				}
				ttl, private := liveHint(views, kinds[r.IntN(len(kinds))], now, bound)
				require.GreaterOrEqual(t, ttl, time.Duration(0))
				require.LessOrEqual(t, ttl, bound, "seed %d: past the host's bound", seed)
				if anyConnecting || anyStale {
					require.Zero(t, ttl, "seed %d: positive while a server connects or a catalog is stale", seed)
				}
				if ttl == 0 {
					require.True(t, private)
				} else {
					positive++
				}
				hints = append(hints, hint{now, ttl})

			}
		}
		for _, h := range hints {
			for _, c := range changes {
				if !c.After(h.at) || !c.Before(h.at.Add(h.ttl)) {
					continue
				}
				foreseen := true
				for _, b := range breaks {
					if b.After(h.at) && !b.After(c) {
						foreseen = false
					}
				}
				require.False(t, foreseen, "seed %d: a hint of %v at %v outlives the change at %v", seed, h.ttl, h.at, c)
			}
		}
	}
	assert.Positive(t, positive, "some hints are positive")
}

// TestLiveHint: the rule case by case.
func TestLiveHint(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cat := func(ttl time.Duration, private bool) *catalog.Catalog {
		return &catalog.Catalog{Cache: map[ports.ListKind]ports.CacheHint{ports.ListTools: {TTL: ttl, Private: private}}}
	}
	for _, tc := range []struct {
		name    string
		views   []cacheView
		ttl     time.Duration
		private bool
	}{
		{"no server", nil, 0, true},
		{"the shortest time left", []cacheView{{StateConnected, cat(time.Minute, false), now.Add(-10 * time.Second)},
			{StateConnected, cat(time.Hour, false), now}}, 50 * time.Second, false},
		{"private if any is", []cacheView{{StateConnected, cat(time.Minute, false), now}, {StateConnected, cat(time.Minute, true), now}}, time.Minute, true},
		{"the host's bound", []cacheView{{StateConnected, cat(24*time.Hour, false), now}}, time.Hour, false},
		{"expired", []cacheView{{StateConnected, cat(time.Minute, false), now.Add(-time.Minute)}}, 0, true},
		{"a server connecting", []cacheView{{StateConnected, cat(time.Minute, false), now}, {StateConnecting, nil, time.Time{}}}, 0, true},
		{"a legacy server", []cacheView{{StateConnected, cat(time.Minute, false), now}, {StateConnected, &catalog.Catalog{}, now}}, 0, true},
		{"stale", []cacheView{{StateConnected, &catalog.Catalog{Stale: true, Cache: cat(time.Minute, false).Cache}, now}}, 0, true},
		{"a failed server offers nothing", []cacheView{{StateConnected, cat(time.Minute, false), now}, {StateFailed, nil, time.Time{}}}, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ttl, private := liveHint(tc.views, ports.ListTools, now, time.Hour)
			assert.Equal(t, tc.ttl, ttl)
			assert.Equal(t, tc.private, private)
		})
	}
}
