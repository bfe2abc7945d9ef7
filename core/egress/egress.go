// Package egress is mcpward's default, strict ports.EgressPolicy: pure
// decisions on URLs and dialled addresses, made with net/netip and no
// network or resolver.
//
// The policy is applied twice (see ports.EgressPolicy): AdmitURL before any
// connection attempt, and AdmitAddr on every address the dialler is about to
// connect to. AdmitURL can only judge what the URL spells; the dial-time
// check is what catches a name that resolves, or rebinds, to a refused
// address, including a Unicode name that IDNA maps onto an ASCII one. A
// transport that skips either check is not using this policy.
//
// The default is strict:
//
//   - https is admitted only to public unicast addresses: never to an address
//     in Ranges, which is built from the IANA special-purpose registries and
//     the metadata endpoints of the major clouds. That includes loopback: a
//     loopback server is reached over http, which needs no TLS on the same
//     host (a host that wants https on loopback adds 127.0.0.0/8 and ::1/128
//     to Options.AllowPrefixes).
//   - http is admitted only when the URL names loopback (127.0.0.0/8, [::1],
//     or "localhost" and the names under it, which RFC 6761 §6.3 reserves for
//     loopback) and only to loopback addresses when dialled. A resolver that
//     sends "x.localhost" elsewhere is caught at dial time.
//   - An IPv4-mapped address (::ffff:a.b.c.d) is judged as the IPv4 address
//     it carries, which is what the kernel dials. An address in the NAT64
//     well-known prefix 64:ff9b::/96 is judged by the IPv4 address it embeds,
//     so an IPv6-only host behind DNS64 still reaches public IPv4 servers
//     while 64:ff9b::10.0.0.1 stays refused; the local-use NAT64 prefix
//     64:ff9b:1::/48, whose embedding is network-defined, is refused whole.
//   - Cloud metadata endpoints are refused by address and by name, and no
//     Options can admit them.
//
// A host with different needs replaces the policy: ports.EgressPolicy is the
// seam. Options only narrow or widen this one in the ways documented there.
package egress

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Reasons carried by the refusals of this package. Every refusal has Class
// refusal.Refused, except ReasonInvalidOptions, which has Class Config.
const (
	// ReasonURLInvalid: the URL is nil.
	ReasonURLInvalid = "url_invalid"
	// ReasonSchemeRefused: the scheme is not http or https.
	ReasonSchemeRefused = "scheme_refused"
	// ReasonOpaqueRefused: the URL has an opaque part ("http:host").
	ReasonOpaqueRefused = "opaque_refused"
	// ReasonUserinfoRefused: the URL has userinfo, which net/http would send
	// as Basic credentials.
	ReasonUserinfoRefused = "userinfo_refused"
	// ReasonHostMissing: the URL has no host.
	ReasonHostMissing = "host_missing"
	// ReasonHostInvalid: the host is not a hostname or an IP literal
	// (bad characters, empty labels, an unbracketed IPv6 literal, an IPv4
	// literal in brackets, a character IDNA would silently map to ASCII).
	ReasonHostInvalid = "host_invalid"
	// ReasonZoneRefused: the host or address carries an IPv6 zone id.
	ReasonZoneRefused = "zone_refused"
	// ReasonPortRefused: the port is empty, zero, above 65535, signed,
	// non-numeric or written with a leading zero.
	ReasonPortRefused = "port_refused"
	// ReasonNumericHost: the host looks like a number but is not a canonical
	// ASCII dotted-quad ("2130706433", "0x7f.0.0.1", "127.1", "1.2.3.4.",
	// fullwidth digits), which a system resolver may read as an address.
	ReasonNumericHost = "numeric_host_refused"
	// ReasonMetadataRefused: the host or address is a cloud metadata endpoint.
	ReasonMetadataRefused = "metadata_refused"
	// ReasonHostRefused: the host is refused by Options.RefuseHosts.
	ReasonHostRefused = "host_refused"
	// ReasonHTTPNotLoopback: http to a URL or address that is not loopback.
	ReasonHTTPNotLoopback = "http_not_loopback"
	// ReasonAddressRefused: the address is in a refused range (the Detail
	// names it) or in Options.RefusePrefixes.
	ReasonAddressRefused = "address_refused"
	// ReasonAddressInvalid: AdmitAddr was given an invalid address.
	ReasonAddressInvalid = "address_invalid"
	// ReasonInvalidOptions: New was given an unusable Options value.
	ReasonInvalidOptions = "egress_options_invalid"
)

// Options adjusts the default policy. The zero value (and a nil *Options)
// is the strict default.
type Options struct {
	// AllowPrefixes admits https to addresses the default table refuses,
	// such as a corporate 10.0.0.0/8 or https on loopback. It never admits
	// a Metadata or Fixed range of the table, an address also covered by
	// RefusePrefixes, or anything over http (http stays loopback-only).
	// IPv4-mapped prefixes (::ffff:a.b.c.d/n, n ≥ 96) are read as IPv4.
	AllowPrefixes []netip.Prefix
	// RefusePrefixes refuses addresses the default would admit, over either
	// scheme, including loopback over http. It wins over AllowPrefixes.
	RefusePrefixes []netip.Prefix
	// RefuseHosts refuses hostnames by name in AdmitURL: an entry matches
	// the name itself and every name under it, case-insensitively, with or
	// without a trailing dot. Entries must be hostnames, not IP literals.
	RefuseHosts []string
}

// Policy is the default EgressPolicy. Its zero value is the strict default,
// as is Default(); New adjusts it with Options. A Policy is immutable after
// construction and safe for concurrent use.
type Policy struct {
	allow  []netip.Prefix
	refuse []netip.Prefix
	hosts  []string
}

var _ ports.EgressPolicy = (*Policy)(nil)

// Default returns the strict default policy.
func Default() *Policy { return &Policy{} }

// New returns the default policy adjusted by opts; nil opts is Default().
// It returns a *refusal.Error of Class Config and Reason
// ReasonInvalidOptions when a prefix is invalid or a RefuseHosts entry is
// not a hostname. New copies what it keeps, so opts may be reused.
func New(opts *Options) (*Policy, error) {
	p := &Policy{}
	if opts == nil {
		return p, nil
	}
	var err error
	if p.allow, err = normalizePrefixes(opts.AllowPrefixes); err != nil {
		return nil, err
	}
	if p.refuse, err = normalizePrefixes(opts.RefusePrefixes); err != nil {
		return nil, err
	}
	for _, h := range opts.RefuseHosts {
		name, numeric, ok := foldHost(h)
		if !ok || numeric {
			return nil, invalidOptions("refused host is not a hostname")
		}
		p.hosts = append(p.hosts, name)
	}
	return p, nil
}

func invalidOptions(detail string) error {
	return &refusal.Error{Class: refusal.Config, Reason: ReasonInvalidOptions, Detail: detail}
}

// normalizePrefixes masks prefixes and rewrites IPv4-mapped ones as IPv4,
// because addresses are unmapped before they are compared.
func normalizePrefixes(in []netip.Prefix) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(in))
	for _, p := range in {
		if !p.IsValid() {
			return nil, invalidOptions("invalid prefix")
		}
		a := p.Addr().WithZone("")
		if a.Is4In6() {
			if p.Bits() < 96 {
				return nil, invalidOptions("IPv4-mapped prefix shorter than /96")
			}
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// AdmitURL decides on u before any connection attempt. It returns nil or a
// *refusal.Error of Class Refused whose Reason is one of the Reason
// constants of this package, checked in this order: ReasonURLInvalid,
// ReasonOpaqueRefused, ReasonSchemeRefused, ReasonUserinfoRefused, then the
// host and port (ReasonHostMissing, ReasonHostInvalid, ReasonZoneRefused,
// ReasonNumericHost, ReasonPortRefused), then ReasonMetadataRefused,
// ReasonHostRefused, and finally the scheme's rule (ReasonHTTPNotLoopback,
// ReasonAddressRefused).
//
// An IP-literal host is judged exactly as AdmitAddr judges it. A name is
// admitted over https (the dial-time check judges what it resolves to) and
// over http only when it is "localhost" or under it. The decision never
// depends on the path, query or fragment, and the error carries at most an
// Origin "scheme://host:port"; ctx is not used.
func (p *Policy) AdmitURL(ctx context.Context, u *url.URL) error {
	if u == nil {
		return refuse(ReasonURLInvalid, "", "")
	}
	scheme := asciiLower(u.Scheme)
	if u.Opaque != "" {
		return refuse(ReasonOpaqueRefused, "", "")
	}
	if scheme != "http" && scheme != "https" {
		return refuse(ReasonSchemeRefused, "", "")
	}
	auth, reason := parseAuthority(u.Host)
	origin := auth.origin(scheme)
	if u.User != nil {
		return refuse(ReasonUserinfoRefused, origin, "")
	}
	if reason != "" {
		return refuse(reason, origin, "")
	}
	if auth.addr.IsValid() {
		if err := p.decide(scheme, auth.addr); err != nil {
			err.Origin = origin
			return err
		}
		return nil
	}
	if what, ok := isMetadataHost(auth.name); ok {
		return refuse(ReasonMetadataRefused, origin, what)
	}
	for _, h := range p.hosts {
		if auth.name == h || strings.HasSuffix(auth.name, "."+h) {
			return refuse(ReasonHostRefused, origin, "")
		}
	}
	if !isLocalhost(auth.name) {
		if scheme == "http" {
			return refuse(ReasonHTTPNotLoopback, origin, "")
		}
		return nil
	}
	// A loopback name: admitted when some loopback address would be.
	err4 := p.decide(scheme, loopbackV4)
	if err4 == nil || p.decide(scheme, loopback6) == nil {
		return nil
	}
	err4.Origin = origin
	return err4
}

// AdmitAddr decides on one address about to be dialled for a URL of the
// given scheme ("http" or "https", ASCII case-insensitive). It returns nil
// or a *refusal.Error of Class Refused with Reason ReasonSchemeRefused,
// ReasonAddressInvalid, ReasonZoneRefused, ReasonPortRefused (port 0),
// ReasonMetadataRefused, ReasonAddressRefused or ReasonHTTPNotLoopback, and
// Origin "scheme://addr:port". ctx is not used.
//
// https admits only an address outside every range of Ranges (or inside
// Options.AllowPrefixes); http admits only 127.0.0.0/8 and ::1. An
// IPv4-mapped address is judged as its IPv4 address, a 64:ff9b::/96 address
// by the IPv4 address it embeds.
func (p *Policy) AdmitAddr(ctx context.Context, scheme string, addr netip.AddrPort) error {
	scheme = asciiLower(scheme)
	if scheme != "http" && scheme != "https" {
		return refuse(ReasonSchemeRefused, "", "")
	}
	if !addr.IsValid() {
		return refuse(ReasonAddressInvalid, "", "")
	}
	origin := scheme + "://" + netip.AddrPortFrom(addr.Addr().WithZone(""), addr.Port()).String()
	if addr.Port() == 0 {
		return refuse(ReasonPortRefused, origin, "")
	}
	if err := p.decide(scheme, addr.Addr()); err != nil {
		err.Origin = origin
		return err
	}
	return nil
}

// decide is the address rule shared by AdmitURL and AdmitAddr. It returns
// a fresh *refusal.Error (without Origin) or nil.
func (p *Policy) decide(scheme string, a netip.Addr) *refusal.Error {
	if a.Zone() != "" {
		return refuse(ReasonZoneRefused, "", "")
	}
	a = a.Unmap()
	row, anyFixed := lookup(a)
	if row != nil && row.Metadata {
		return refuse(ReasonMetadataRefused, "", row.Name)
	}
	embedded, isNAT64 := nat64Embedded(a)
	if isNAT64 {
		if r, _ := lookup(embedded); r != nil && r.Metadata {
			return refuse(ReasonMetadataRefused, "", r.Name)
		}
	}
	if containsAny(p.refuse, a) || isNAT64 && containsAny(p.refuse, embedded) {
		return refuse(ReasonAddressRefused, "", "refused by the host's policy")
	}
	if scheme == "http" {
		if isLoopback(a) {
			return nil
		}
		return refuse(ReasonHTTPNotLoopback, "", "")
	}
	if !anyFixed && containsAny(p.allow, a) {
		return nil
	}
	if isNAT64 {
		return p.decide(scheme, embedded)
	}
	if row != nil {
		return refuse(ReasonAddressRefused, "", row.Name+" ("+row.Source+")")
	}
	return nil
}

func containsAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func refuse(reason, origin, detail string) *refusal.Error {
	return &refusal.Error{Class: refusal.Refused, Reason: reason, Origin: origin, Detail: detail}
}

// origin renders "scheme://host:port" with the scheme's default port when
// the URL names none, "scheme://host" when the port was refused, or "" when
// the host is not known to be printable.
func (a authority) origin(scheme string) string {
	if a.display == "" {
		return ""
	}
	if a.badPort {
		return scheme + "://" + a.display
	}
	port := a.port
	if port == 0 {
		port = 443
		if scheme == "http" {
			port = 80
		}
	}
	return scheme + "://" + a.display + ":" + strconv.Itoa(int(port))
}
