package catalog

import (
	"reflect"

	"github.com/mcpward/mcpward/core/refusal"
)

// Refusal reasons of Tool.Call for a tool of an older catalog (see
// CatalogSource).
const (
	// ReasonToolChanged (Class Config): the server's current catalog holds
	// a tool of this host-facing name whose description for the model
	// (Spec), server name or result cap differs from the one called. The
	// arguments were not checked against the old schema and nothing was
	// sent; the host reads the tool again (from the current Set) and calls
	// that.
	ReasonToolChanged = "tool_changed"
	// ReasonToolRemoved (Class Config): the server's current catalog no
	// longer holds a tool of this host-facing name. Nothing was sent.
	ReasonToolRemoved = "tool_removed"
)

// CatalogSource is an optional interface of a Caller that knows the
// server's current catalog (the supervisor implements it). When the Caller
// of a Tool implements it, Tool.Call first looks the tool up in the
// current catalog: the same tool (or one equal to it, as after a refresh
// that changed nothing about it, or a reconnect) is called; a tool that
// changed is refused with ReasonToolChanged and one that vanished with
// ReasonToolRemoved, before the arguments are validated. A nil catalog
// (none retained: not connected, closed) skips the check, and the Caller
// then says why it cannot call.
type CatalogSource interface {
	// Catalog returns the server's current catalog, or nil. It must be
	// safe for concurrent use and must not block.
	Catalog() *Catalog
}

// current returns the tool a call of t goes to: t itself, or the current
// catalog's tool of the same host-facing name when that is equal to t. It
// refuses a changed or removed tool (see CatalogSource).
func (t *Tool) current() (*Tool, error) {
	src, ok := t.srv.caller.(CatalogSource)
	if !ok {
		return t, nil
	}
	cat := src.Catalog()
	if cat == nil {
		return t, nil
	}
	u, ok := cat.Tool(t.HostName())
	switch {
	case !ok:
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonToolRemoved, Server: t.srv.id,
			Detail: "the server no longer offers this tool"}
	case u == t:
		return t, nil
	case !t.Same(u):
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonToolChanged, Server: t.srv.id,
			Detail: "the server changed this tool since it was read"}
	}
	return u, nil
}

// Same reports whether t and u are the same tool for a host: the same
// server id, server name and result cap, and equal Specs (host-facing
// name, description, narrowed input schema, and whatever else Spec
// describes). Tools of two catalogs of one server built from the same
// listing are Same.
func (t *Tool) Same(u *Tool) bool {
	if t == u {
		return true
	}
	if t == nil || u == nil {
		return false
	}
	return t.srv.id == u.srv.id && t.NameOnServer() == u.NameOnServer() && t.HostName() == u.HostName() && t.cap == u.cap &&
		reflect.DeepEqual(t.Spec(), u.Spec())
}
