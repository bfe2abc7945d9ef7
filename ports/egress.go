package ports

import (
	"context"
	"net/netip"
	"net/url"
)

// EgressPolicy admits network destinations. The HTTP transport (and the
// OAuth client) applies it twice: to the URL before any connection attempt,
// and to every address actually dialled, at dial time, so a name that
// resolves to a refused address is caught. There is no second admission
// path.
//
// Implementations are pure decisions, safe for concurrent use, and never
// touch the network or a resolver themselves.
type EgressPolicy interface {
	// AdmitURL decides on a URL before any attempt. It returns nil or a
	// *refusal.Error of Class Refused whose Reason says why
	// (e.g. "scheme_refused", "userinfo_refused", "address_refused").
	AdmitURL(ctx context.Context, u *url.URL) error
	// AdmitAddr decides on one dialled address for a connection made for a
	// URL of the given scheme ("http" or "https"): nil or a *refusal.Error
	// of Class Refused.
	AdmitAddr(ctx context.Context, scheme string, addr netip.AddrPort) error
}
