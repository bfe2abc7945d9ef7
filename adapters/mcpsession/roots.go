package mcpsession

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// rootsListTimeout bounds one call of the host's Roots.List.
const rootsListTimeout = 5 * time.Second

// rootsMirror keeps the roots a session answers roots/list with, and the
// SDK client's own roots in step with them: the SDK sends
// notifications/roots/list_changed only when its roots change, so a change
// of the host's roots is mirrored into it.
type rootsMirror struct {
	provider ports.Roots

	mu   sync.Mutex
	list []*mcp.Root
	// mirrored is the SDK client's roots, by URI.
	mirrored map[string]string
	kick     chan struct{}
}

// snapshot returns the current roots (a fresh slice, never nil).
func (m *rootsMirror) snapshot() []*mcp.Root {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*mcp.Root, 0, len(m.list))
	for _, r := range m.list {
		c := *r
		out = append(out, &c)
	}
	return out
}

// validRoots keeps the roots a server may be told about: file:// URIs of
// bounded length, at most ports.MaxRoots, names cut; a duplicate URI keeps
// its first entry.
func validRoots(in []ports.Root) []*mcp.Root {
	out := make([]*mcp.Root, 0, min(len(in), ports.MaxRoots))
	seen := map[string]bool{}
	for _, r := range in {
		if len(out) == ports.MaxRoots {
			break
		}
		if len(r.URI) > ports.MaxElicitURL || seen[r.URI] || strings.ContainsAny(r.URI, "\x00\r\n") {
			continue
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" {
			continue
		}
		seen[r.URI] = true
		out = append(out, &mcp.Root{URI: r.URI, Name: cut(r.Name, ports.MaxElicitText)})
	}
	return out
}

// fetch asks the host for its roots, bounded; a failure keeps the
// current list.
func (m *rootsMirror) fetch(ctx context.Context) ([]*mcp.Root, bool) {
	ctx, cancel := context.WithTimeout(ctx, rootsListTimeout)
	defer cancel()
	roots, err := m.provider.List(ctx)
	if err != nil {
		return nil, false
	}
	return validRoots(roots), true
}

// prime sets the first list before the SDK session exists (so nothing is
// notified) and mirrors it into client.
func (m *rootsMirror) prime(ctx context.Context, client *mcp.Client) {
	m.mirrored = map[string]string{}
	m.kick = make(chan struct{}, 1)
	list, ok := m.fetch(ctx)
	if !ok {
		list = nil
	}
	m.sync(client, list)
}

// sync replaces the list and brings the SDK's roots in step, which
// notifies the server when anything changed.
func (m *rootsMirror) sync(client *mcp.Client, list []*mcp.Root) {
	m.mu.Lock()
	m.list = list
	var add []*mcp.Root
	keep := make(map[string]bool, len(list))
	for _, r := range list {
		keep[r.URI] = true
		if name, ok := m.mirrored[r.URI]; !ok || name != r.Name {
			c := *r
			add = append(add, &c)
			m.mirrored[r.URI] = r.Name
		}
	}
	var remove []string
	for uri := range m.mirrored {
		if !keep[uri] {
			remove = append(remove, uri)
			delete(m.mirrored, uri)
		}
	}
	m.mu.Unlock()
	if len(add) > 0 {
		client.AddRoots(add...)
	}
	if len(remove) > 0 {
		client.RemoveRoots(remove...)
	}
}

// watchRoots follows the host's roots for the life of the session: every
// change is fetched again and mirrored (a burst of changes coalesces into
// one fetch).
func (s *session) watchRoots(client *mcp.Client) {
	m := &s.host.roots
	cancel := m.provider.Subscribe(func() {
		select {
		case m.kick <- struct{}{}:
		default:
		}
	})
	// A change between prime and Subscribe is caught by one more fetch.
	select {
	case m.kick <- struct{}{}:
	default:
	}
	go func() {
		defer cancel()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-s.done:
				return
			case <-m.kick:
				if list, ok := m.fetch(s.ctx); ok && s.ctx.Err() == nil {
					m.sync(client, list)
				}
			}
		}
	}()
}
