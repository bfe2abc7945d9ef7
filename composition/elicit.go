package composition

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ElicitationOptions turn on elicitation for the servers of one Connect:
// a server may then ask the user a question mid-call (a form, or a URL to
// visit) through the host's Elicitor. Only the servers it enables are
// told the client supports elicitation; any other server's elicitation
// request is refused as if the host offered none. What a session refuses
// before the Elicitor is asked (nested or oversized forms, URLs that are
// not https, a second question while one waits) is answered to the
// server by name (the mcpsession.ReasonElicit constants), and the
// Elicitor's answer is checked against the form before it is sent.
type ElicitationOptions struct {
	// Elicitor answers every question; nil turns elicitation off.
	Elicitor ports.Elicitor
	// Servers names the servers that may elicit; nil means every server
	// this Connect connects, an empty non-nil slice none.
	Servers []string
	// Timeout bounds the wait for one answer (the server is then answered
	// "cancel"); 0 means mcpsession.DefaultElicitTimeout. The call that
	// waits is still bounded by its own call timeout.
	Timeout time.Duration
	// OnRefused, when non-nil, is told about every question a session
	// refused before (or instead of) sending the Elicitor's answer: a
	// *refusal.Error with the server id and a mcpsession.ReasonElicit
	// reason, never server text. It must not block.
	OnRefused func(*refusal.Error)
}

// RootsOptions offer the host's roots (the directories the servers may
// work in) to the servers of one Connect: only the servers it enables are
// told the client has roots; they get roots/list answered with the file://
// roots of Roots and a notifications/roots/list_changed when those change.
// Any other server's roots/list is refused as if the host offered none.
type RootsOptions struct {
	// Roots lists the roots; nil turns roots off. ports.NewRootSet is a
	// ready implementation.
	Roots ports.Roots
	// Servers names the servers that get the roots; nil means every
	// server this Connect connects, an empty non-nil slice none.
	Servers []string
}

// sessionOptions returns the mcpsession options of a Connect: opts.Session
// with the host ports of opts.Elicitation and opts.Roots.
func (opts *ConnectOptions) sessionOptions() *mcpsession.Options {
	if opts.Elicitation == nil && opts.Roots == nil {
		return opts.Session
	}
	var o mcpsession.Options
	if opts.Session != nil {
		o = *opts.Session
	}
	if e := opts.Elicitation; e != nil && e.Elicitor != nil {
		servers, el := slices.Clone(e.Servers), e.Elicitor
		o.Elicitor = func(id string) ports.Elicitor {
			if servers == nil || slices.Contains(servers, id) {
				return el
			}
			return nil
		}
		o.ElicitTimeout = e.Timeout
		o.OnElicitRefused = e.OnRefused
	}
	if r := opts.Roots; r != nil && r.Roots != nil {
		servers, roots := slices.Clone(r.Servers), r.Roots
		o.Roots = func(id string) ports.Roots {
			if servers == nil || slices.Contains(servers, id) {
				return roots
			}
			return nil
		}
	}
	return &o
}

// ElicitDefaults returns an Elicitor for hosts without a person to ask
// (scripts, CI): it accepts every form with the schema's defaults
// (ports.ElicitSchema.Defaults), declines a form the defaults do not
// complete (a required field without a default), and declines every URL
// request (nobody is there to visit it). Safe for concurrent use.
func ElicitDefaults() ports.Elicitor {
	return ports.ElicitorFunc(func(_ context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
		if r.Mode != ports.ElicitForm {
			return ports.ElicitResult{Action: ports.ElicitDecline}, nil
		}
		defs := r.Schema.Defaults()
		if r.Schema.Validate(defs) != nil {
			return ports.ElicitResult{Action: ports.ElicitDecline}, nil
		}
		return ports.ElicitResult{Action: ports.ElicitAccept, Content: defs}, nil
	})
}

// ElicitDecline returns an Elicitor that declines every question: the
// server learns the user said no, where without an Elicitor it learns the
// client cannot ask. Safe for concurrent use.
func ElicitDecline() ports.Elicitor {
	return ports.ElicitorFunc(func(context.Context, ports.ElicitRequest) (ports.ElicitResult, error) {
		return ports.ElicitResult{Action: ports.ElicitDecline}, nil
	})
}

// FileRoot returns the root of the directory dir: its file:// URI (dir
// made absolute and clean) named after its last element. It fails only
// when dir cannot be made absolute.
func FileRoot(dir string) (ports.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ports.Root{}, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return ports.Root{URI: u.String(), Name: filepath.Base(abs)}, nil
}
