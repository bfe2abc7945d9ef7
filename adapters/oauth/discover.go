package oauth

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// Well-known path segments of the discovery documents.
const (
	wellKnownResource = "/.well-known/oauth-protected-resource"   // RFC 9728 §3
	wellKnownOAuth    = "/.well-known/oauth-authorization-server" // RFC 8414 §3
	wellKnownOIDC     = "/.well-known/openid-configuration"       // OpenID Connect Discovery 1.0 §4
)

// resourceMetadata is the part of an RFC 9728 document this package reads.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is the part of an RFC 8414 (or OpenID Connect discovery)
// document this package reads.
type serverMetadata struct {
	Issuer                        string   `json:"issuer"`
	ScopesSupported               []string `json:"scopes_supported"`
	AuthorizationEndpoint         string   `json:"authorization_endpoint"`
	TokenEndpoint                 string   `json:"token_endpoint"`
	RegistrationEndpoint          string   `json:"registration_endpoint"`
	RevocationEndpoint            string   `json:"revocation_endpoint"`
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	ISSParameterSupported         bool     `json:"authorization_response_iss_parameter_supported"`
	// DPoPSigningAlgValuesSupported: the authorization server issues
	// DPoP-bound tokens to proofs signed with these (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported"`
	clientMetadata
}

// Hints of a Report that take no argument.
const (
	hintServerURL = "the server URL must be an absolute https URL without userinfo or fragment"
	hintNoPRM     = "no resource metadata: if the server documents its authorization server, " +
		"set oauth.authServerMetadataUrl"
	hintNoAS = "the resource metadata names no authorization server: if the server documents one, " +
		"set oauth.authServerMetadataUrl"
	hintChallengeLink = "the server's challenge names its resource metadata at a URL that is not " +
		"absolute https (a relative resource_metadata is not resolved against anything)"
	hintPKCE = "the authorization server does not list S256 in code_challenge_methods_supported; " +
		"sign-in needs PKCE S256"
	hintEndpointMissing = "the authorization server metadata lacks authorization_endpoint or token_endpoint; they are never guessed"
	hintIssPromised     = "the authorization server promises iss in its redirect (RFC 9207): a redirect without it, " +
		"or naming another issuer, is refused (sign_in_issuer_mismatch)"
	hintIssNotPromised = "the authorization server does not promise iss in its redirect (RFC 9207): a redirect that " +
		"carries one must name exactly its issuer (sign_in_issuer_mismatch)"
	hintDPoP = "the authorization server issues DPoP-bound tokens (RFC 9449, ES256): a sign-in binds them to a " +
		"proof key kept beside them, and they are never sent as Bearer tokens"
	hintEndpointInsecure = "an endpoint in the authorization server metadata is not an absolute https URL"
)

// discovery is one run of discover: what it needs and the report it
// writes. It is used by one goroutine.
type discovery struct {
	c   *Client
	s   Server
	rep *Report
}

// discoverWith establishes, and checks link by link, the endpoints of s. ch is
// the Bearer challenge recorded for s (zero when none): its
// ResourceMetadata is followed instead of the well-known locations, and
// its Scope, when not nil, is preferred to scopes_supported. rep, when not
// nil, receives a Step for every location tried and check made, and the
// failing Reason. It is safe for concurrent use.
//
// The protected-resource metadata (RFC 9728) is fetched from the
// challenge's link (its resource must be s's canonical URL), else from the
// path-inserted well-known location (its resource must be s's canonical
// URL) and then the root one (its resource must be s's origin, exactly:
// RFC 9728 §3.3 compares it with the identifier the location was built
// from). The resource indicator sent later is s's canonical URL wherever
// the metadata was found. The first authorization server it names is the
// issuer, whose metadata is fetched from its RFC 8414 and OpenID Connect
// discovery locations, in the order the MCP 2025-11-25 authorization spec
// gives, or from s.MetadataURL alone when set (see serverMetadataAt).
// Nothing is guessed: no endpoint at the MCP server's origin, no
// authorization server that no metadata names.
//
// Errors, each naming s.ID and, for the server's documents, the server's
// origin, for the authorization server's, its origin:
//   - Config ReasonURLInvalid: s.URL or s.MetadataURL is not an absolute
//     https URL (or loopback http under Options.AllowLoopbackHTTP)
//     without userinfo or fragment;
//   - Refused ReasonInsecureEndpoint: the challenge's resource_metadata,
//     the issuer, or an endpoint is not such a URL (an issuer also must
//     have no query, RFC 8414 §2);
//   - Unsupported ReasonResourceMetadataUnavailable: every location
//     answered 4xx (with s.MetadataURL set, discovery goes on without it);
//   - Refused ReasonResourceMismatch: the resource is not the one the
//     location requires;
//   - Unsupported ReasonAuthorizationServerMissing: no authorization
//     server is named (and s.MetadataURL is unset);
//   - Unsupported ReasonServerMetadataUnavailable, Refused
//     ReasonIssuerMismatch, Refused ReasonPKCEUnsupported, Unsupported
//     ReasonEndpointMissing: see serverMetadataAt and checkServerMetadata;
//   - Protocol ReasonMetadataInvalid: a document is not a JSON object, is
//     over Options.MaxResponseBytes, or came with a status that is neither
//     200 nor 4xx;
//   - from c.get, as they are: Refused ReasonRedirectRefused (no redirect
//     is followed, nor another location tried after one), Transient
//     ReasonUnavailable (network, 429, 5xx: no other location is tried),
//     Transient "canceled"/"deadline_exceeded".
func (c *Client) discoverWith(ctx context.Context, s Server, ch Challenge, rep *Report) (*endpoints, error) {
	if rep != nil {
		rep.Server = s.ID
	}
	d := &discovery{c: c, s: s, rep: rep}
	e, err := d.run(ctx, ch)
	if err != nil && rep != nil {
		rep.Reason = refusal.ReasonOf(err)
	}
	return e, err
}

// run is discoverWith's body.
func (d *discovery) run(ctx context.Context, ch Challenge) (*endpoints, error) {
	s := d.s
	resource, origin, err := d.c.urls.canonical(s.URL, s.ID)
	if err != nil {
		return nil, d.failed(CheckServerURL, projectURL(s.URL), 0, err, hintServerURL)
	}
	if d.rep != nil {
		d.rep.Resource = projectURL(resource)
	}
	var metadataURL *url.URL
	if s.MetadataURL != "" {
		if _, _, err := d.c.urls.canonical(s.MetadataURL, s.ID); err != nil {
			return nil, d.failed(CheckServerMetadata, projectURL(s.MetadataURL), 0, err,
				"oauth.authServerMetadataUrl must be an absolute https URL without userinfo or fragment")
		}
		if metadataURL, err = url.Parse(s.MetadataURL); err != nil {
			return nil, refuse(refusal.Config, ReasonURLInvalid, s.ID, "")
		}
	}

	rm, err := d.resourceMetadata(ctx, resource, origin, ch.ResourceMetadata)
	if refusal.ReasonOf(err) == ReasonResourceMetadataUnavailable {
		switch {
		case metadataURL != nil:
			// MetadataURL names the authorization server; go on without it.
			d.rep.add(Step{Check: CheckResourceMetadata, Outcome: OutcomeNotFound,
				Hint: "no resource metadata; oauth.authServerMetadataUrl names the authorization server"})
			rm, err = nil, nil
		case ch.ResourceMetadata != "":
			d.failed(CheckResourceMetadata, "", 0, err, "the resource metadata the server's challenge names is not there")
		default:
			d.failed(CheckResourceMetadata, "", 0, err, hintNoPRM)
		}
	}
	if err != nil {
		return nil, err
	}

	e := &endpoints{resource: resource, indicator: resource, origin: origin}
	if rm != nil {
		e.scopes = scopeTokens(rm.ScopesSupported)
		// The resource indicator is the metadata's resource exactly as it
		// publishes it (it was checked to identify this server, or its
		// origin at the root location): an authorization server that
		// compares strings gets back what it published.
		e.indicator = rm.Resource
		if d.rep != nil {
			d.rep.Resource = projectURL(rm.Resource)
		}
	}
	if len(ch.Scope) > 0 {
		e.scopes = slices.Clone(ch.Scope)
	}

	var sm *serverMetadata
	if metadataURL != nil {
		if sm, err = d.serverMetadataAt(ctx, s.MetadataURL, metadataURL); err != nil {
			return nil, err
		}
		if rm != nil && len(rm.AuthorizationServers) > 0 && !slices.Contains(rm.AuthorizationServers, sm.Issuer) {
			return nil, d.failed(CheckServerMetadata, projectURL(s.MetadataURL), 0,
				refuse(refusal.Refused, ReasonIssuerMismatch, s.ID, d.c.urls.origin(sm.Issuer)),
				"oauth.authServerMetadataUrl leads to the issuer "+projectURL(sm.Issuer)+
					", which the resource metadata does not list among its authorization servers")
		}
	} else {
		if len(rm.AuthorizationServers) == 0 {
			return nil, d.failed(CheckAuthorizationServer, "", 0,
				refuse(refusal.Unsupported, ReasonAuthorizationServerMissing, s.ID, origin),
				hintNoAS)
		}
		issuer := rm.AuthorizationServers[0]
		if _, err := d.c.issuerURL(issuer, s.ID); err != nil {
			return nil, d.failed(CheckAuthorizationServer, projectURL(issuer), 0,
				refuse(refusal.Refused, ReasonInsecureEndpoint, s.ID, origin),
				"the authorization server the resource metadata names is not an absolute https URL without query")
		}
		d.rep.add(Step{Check: CheckAuthorizationServer, URL: projectURL(issuer), Outcome: OutcomeOK})
		if sm, err = d.serverMetadataFor(ctx, issuer); err != nil {
			return nil, err
		}
	}
	if err := d.checkServerMetadata(sm, e); err != nil {
		return nil, err
	}
	if d.rep != nil {
		d.rep.Issuer = projectURL(e.issuer)
	}
	return e, nil
}

// failed adds a failed step for check at u (projected) with status, err's
// reason and hint, and returns err.
func (d *discovery) failed(check, u string, status int, err error, hint string) error {
	d.rep.add(Step{Check: check, URL: u, Status: status, Outcome: OutcomeFailed, Reason: refusal.ReasonOf(err), Hint: hint})
	return err
}

// fetchHint is the hint of a step whose request failed with reason.
func fetchHint(reason string) string {
	switch reason {
	case ReasonRedirectRefused:
		return "the location answered with a redirect; discovery follows none, so the document must be served where it is looked for"
	case ReasonUnavailable:
		return "the network failed or the server answered 429 or 5xx; try again later"
	case ReasonMetadataInvalid:
		return "the answer is larger than the limit"
	case ReasonURLInvalid:
		return "the URL is not one the client may send to"
	}
	return ""
}

// prmLocation is one protected-resource metadata location and the
// resource identifier its document must name (canonically compared).
type prmLocation struct {
	u    *url.URL
	want string
	root bool // the root location: want is the server's origin
}

// resourceMetadata fetches the RFC 9728 document of the server whose
// canonical URL is resource and origin origin: from link (a challenge's
// resource_metadata) when it is not "", else from resourceLocations. A
// 4xx moves on to the next location. It checks that the document's
// resource is the identifier the location requires.
//
// Errors name server and origin: Refused ReasonInsecureEndpoint (link is
// not a URL the Client follows), Unsupported
// ReasonResourceMetadataUnavailable (4xx everywhere), Protocol
// ReasonMetadataInvalid (not a JSON object, or a status neither 200 nor
// 4xx), Refused ReasonResourceMismatch; c.get's errors as they are.
func (d *discovery) resourceMetadata(ctx context.Context, resource, origin, link string) (*resourceMetadata, error) {
	server := d.s.ID
	var locations []prmLocation
	if link != "" {
		u, err := d.c.urls.link(link, server)
		if err != nil {
			return nil, d.failed(CheckChallenge, projectURL(link), 0,
				refuse(refusal.Refused, ReasonInsecureEndpoint, server, origin),
				hintChallengeLink)
		}
		d.rep.add(Step{Check: CheckChallenge, URL: projectURL(link), Outcome: OutcomeOK})
		locations = []prmLocation{{u: u, want: resource}}
	} else {
		locations = resourceLocations(resource)
	}
	for _, loc := range locations {
		shown := projectURL(loc.u.String())
		resp, err := d.c.get(ctx, server, loc.u)
		if err != nil {
			return nil, d.failed(CheckResourceMetadata, shown, 0, err, fetchHint(refusal.ReasonOf(err)))
		}
		switch {
		case resp.status >= 400 && resp.status < 500:
			d.rep.add(Step{Check: CheckResourceMetadata, URL: shown, Status: resp.status, Outcome: OutcomeNotFound})
			continue
		case resp.status != http.StatusOK:
			return nil, d.failed(CheckResourceMetadata, shown, resp.status,
				refuse(refusal.Protocol, ReasonMetadataInvalid, server, origin),
				"the answer is neither 200 nor 4xx")
		}
		var rm resourceMetadata
		if err := decodeObject(resp, &rm, server, origin); err != nil {
			return nil, d.failed(CheckResourceMetadata, shown, resp.status, err, "the answer is not a JSON object of protected-resource metadata")
		}
		if got, _, err := d.c.urls.canonical(rm.Resource, server); err != nil || got != loc.want {
			return nil, d.failed(CheckResourceMetadata, shown, resp.status,
				refuse(refusal.Refused, ReasonResourceMismatch, server, origin),
				mismatchHint(rm.Resource, loc))
		}
		d.rep.add(Step{Check: CheckResourceMetadata, URL: shown, Status: resp.status, Outcome: OutcomeOK})
		return &rm, nil
	}
	return nil, refuse(refusal.Unsupported, ReasonResourceMetadataUnavailable, server, origin)
}

// mismatchHint says how the resource got differs from what loc requires.
func mismatchHint(got string, loc prmLocation) string {
	shownGot, shownWant := projectURL(got), projectURL(loc.want)
	if got == "" {
		shownGot = "no resource"
	}
	h := "the metadata describes " + shownGot + " but this server is " + shownWant
	if loc.root {
		h = "the metadata at the root location must describe the origin " + shownWant + "; it describes " + shownGot
	}
	if shownGot == shownWant {
		h += " (they differ in scheme case, query or form)"
	}
	return h
}

// resourceLocations returns the RFC 9728 §3.1 well-known locations of the
// canonical URL resource, in the order they are tried, with the resource
// each must describe: the well-known path inserted between host and path
// (the query kept), describing resource; then, when it differs, the root
// location, describing the origin alone (scheme and host, no path or
// query).
func resourceLocations(resource string) []prmLocation {
	u, err := url.Parse(resource)
	if err != nil {
		return nil
	}
	base := u.Scheme + "://" + u.Host
	first := base + wellKnownResource + u.EscapedPath()
	if u.RawQuery != "" {
		first += "?" + u.RawQuery
	}
	root := base + wellKnownResource
	var out []prmLocation
	if l, err := url.Parse(first); err == nil {
		out = append(out, prmLocation{u: l, want: resource, root: first == root})
	}
	if root != first {
		if l, err := url.Parse(root); err == nil {
			out = append(out, prmLocation{u: l, want: base, root: true})
		}
	}
	return out
}

// issuerURL parses an issuer identifier, which must be a URL c follows
// without userinfo, fragment or query (RFC 8414 §2); otherwise it returns
// Class Refused, Reason ReasonInsecureEndpoint, naming no origin.
func (c *Client) issuerURL(issuer, server string) (*url.URL, error) {
	u, err := c.urls.link(issuer, server)
	if err != nil || u.RawQuery != "" || u.ForceQuery {
		return nil, refusal.New(refusal.Refused, ReasonInsecureEndpoint, server)
	}
	return u, nil
}

// serverLocations returns the metadata locations of issuer (an issuerURL)
// in the order the MCP 2025-11-25 authorization spec tries them: with a
// path, RFC 8414 path insertion, OpenID Connect path insertion, OpenID
// Connect path appending; without, the RFC 8414 then the OpenID Connect
// location. A terminating "/" of the path is removed first (RFC 8414 §3.1).
// The scheme and host are kept as the issuer writes them.
func serverLocations(issuer *url.URL) []string {
	base := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{base + wellKnownOAuth, base + wellKnownOIDC}
	}
	return []string{base + wellKnownOAuth + path, base + wellKnownOIDC + path, base + path + wellKnownOIDC}
}

// serverMetadataFor fetches the metadata of issuer (already an issuerURL)
// from its serverLocations in order, a 4xx moving on to the next, and
// checks that it names issuer exactly (RFC 8414 §3.3).
//
// Errors name server and the issuer's origin: Unsupported
// ReasonServerMetadataUnavailable (4xx everywhere), Protocol
// ReasonMetadataInvalid (not a JSON object, or a status neither 200 nor
// 4xx), Refused ReasonIssuerMismatch; c.get's errors as they are.
func (d *discovery) serverMetadataFor(ctx context.Context, issuer string) (*serverMetadata, error) {
	server := d.s.ID
	iu, err := d.c.issuerURL(issuer, server)
	if err != nil {
		return nil, err
	}
	asOrigin := d.c.urls.origin(issuer)
	for _, loc := range serverLocations(iu) {
		u, err := url.Parse(loc)
		if err != nil {
			continue
		}
		sm, found, err := d.fetchServerMetadata(ctx, u, asOrigin)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if sm.Issuer != issuer {
			return nil, d.failed(CheckServerMetadata, projectURL(loc), http.StatusOK,
				refuse(refusal.Refused, ReasonIssuerMismatch, server, asOrigin),
				"the metadata names the issuer "+quoteIssuer(sm.Issuer)+" but was fetched for "+projectURL(issuer)+
					": it must name exactly that issuer (an authorization server behind a proxy must publish its public URL)")
		}
		d.rep.add(Step{Check: CheckServerMetadata, URL: projectURL(loc), Status: http.StatusOK, Outcome: OutcomeOK})
		return sm, nil
	}
	err = refuse(refusal.Unsupported, ReasonServerMetadataUnavailable, server, asOrigin)
	return nil, d.failed(CheckServerMetadata, "", 0, err, "the authorization server "+projectURL(issuer)+
		" publishes no metadata at any RFC 8414 or OpenID Connect discovery location")
}

// quoteIssuer shows an issuer a document named: projected, or "nothing".
func quoteIssuer(issuer string) string {
	if issuer == "" {
		return "nothing"
	}
	return projectURL(issuer)
}

// serverMetadataAt fetches the authorization server metadata at exactly
// raw (a definition's MetadataURL, already checked, and u its parse) and
// checks that the issuer it names is an issuerURL one of whose
// serverLocations is raw, string for string.
//
// Errors name server and the authorization server's origin: Unsupported
// ReasonServerMetadataUnavailable (4xx), Protocol ReasonMetadataInvalid,
// Refused ReasonInsecureEndpoint (the issuer is not https, or has a
// query), Refused ReasonIssuerMismatch; c.get's errors as they are.
func (d *discovery) serverMetadataAt(ctx context.Context, raw string, u *url.URL) (*serverMetadata, error) {
	server := d.s.ID
	asOrigin := d.c.urls.origin(raw)
	shown := projectURL(raw)
	sm, found, err := d.fetchServerMetadata(ctx, u, asOrigin)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, d.failed(CheckServerMetadata, "", 0,
			refuse(refusal.Unsupported, ReasonServerMetadataUnavailable, server, asOrigin),
			"there is no metadata at oauth.authServerMetadataUrl")
	}
	iu, err := d.c.issuerURL(sm.Issuer, server)
	if err != nil {
		return nil, d.failed(CheckServerMetadata, shown, http.StatusOK,
			refuse(refusal.Refused, ReasonInsecureEndpoint, server, asOrigin),
			"the issuer the metadata names is not an absolute https URL without query")
	}
	if !slices.Contains(serverLocations(iu), raw) {
		return nil, d.failed(CheckServerMetadata, shown, http.StatusOK,
			refuse(refusal.Refused, ReasonIssuerMismatch, server, asOrigin),
			"oauth.authServerMetadataUrl is not a metadata location of the issuer "+projectURL(sm.Issuer)+" the document names")
	}
	d.rep.add(Step{Check: CheckServerMetadata, URL: shown, Status: http.StatusOK, Outcome: OutcomeOK})
	return sm, nil
}

// fetchServerMetadata GETs u and decodes an authorization server metadata
// document; found is false on a 4xx (a not_found step is added). Errors
// name the server and asOrigin: Protocol ReasonMetadataInvalid (not a JSON
// object, or a status neither 200 nor 4xx); c.get's errors as they are.
// Failures add a failed step.
func (d *discovery) fetchServerMetadata(ctx context.Context, u *url.URL, asOrigin string) (sm *serverMetadata, found bool, err error) {
	server := d.s.ID
	shown := projectURL(u.String())
	resp, err := d.c.get(ctx, server, u)
	if err != nil {
		return nil, false, d.failed(CheckServerMetadata, shown, 0, err, fetchHint(refusal.ReasonOf(err)))
	}
	switch {
	case resp.status >= 400 && resp.status < 500:
		d.rep.add(Step{Check: CheckServerMetadata, URL: shown, Status: resp.status, Outcome: OutcomeNotFound})
		return nil, false, nil
	case resp.status != http.StatusOK:
		return nil, false, d.failed(CheckServerMetadata, shown, resp.status,
			refuse(refusal.Protocol, ReasonMetadataInvalid, server, asOrigin),
			"the answer is neither 200 nor 4xx")
	}
	sm = new(serverMetadata)
	if err := decodeObject(resp, sm, server, asOrigin); err != nil {
		return nil, false, d.failed(CheckServerMetadata, shown, resp.status, err,
			"the answer is not a JSON object of authorization server metadata")
	}
	return sm, true, nil
}

// checkServerMetadata checks sm, whose issuer is already checked, and
// fills e's issuer, endpoints, issParameter and offlineAccess from it.
// Errors name the server and the issuer's origin: Refused
// ReasonPKCEUnsupported (no S256 in code_challenge_methods_supported),
// Unsupported ReasonEndpointMissing (no authorization or token endpoint),
// Refused ReasonInsecureEndpoint (an endpoint present that is not a URL
// the Client follows).
func (d *discovery) checkServerMetadata(sm *serverMetadata, e *endpoints) error {
	server := d.s.ID
	asOrigin := d.c.urls.origin(sm.Issuer)
	if !slices.Contains(sm.CodeChallengeMethodsSupported, "S256") {
		return d.failed(CheckPKCE, "", 0,
			refuse(refusal.Refused, ReasonPKCEUnsupported, server, asOrigin),
			hintPKCE)
	}
	d.rep.add(Step{Check: CheckPKCE, Outcome: OutcomeOK})
	if sm.AuthorizationEndpoint == "" || sm.TokenEndpoint == "" {
		return d.failed(CheckEndpoints, "", 0,
			refuse(refusal.Unsupported, ReasonEndpointMissing, server, asOrigin),
			hintEndpointMissing)
	}
	for _, ep := range []struct {
		raw string
		dst **url.URL
	}{
		{sm.AuthorizationEndpoint, &e.authorization},
		{sm.TokenEndpoint, &e.token},
		{sm.RegistrationEndpoint, &e.registration},
		{sm.RevocationEndpoint, &e.revocation},
	} {
		if ep.raw == "" {
			continue
		}
		u, err := d.c.urls.link(ep.raw, server)
		if err != nil {
			return d.failed(CheckEndpoints, projectURL(ep.raw), 0,
				refuse(refusal.Refused, ReasonInsecureEndpoint, server, asOrigin),
				hintEndpointInsecure)
		}
		*ep.dst = u
	}
	d.rep.add(Step{Check: CheckEndpoints, Outcome: OutcomeOK})
	e.issuer = sm.Issuer
	e.issParameter = sm.ISSParameterSupported
	if e.issParameter {
		d.rep.add(Step{Check: CheckIssuerParameter, Outcome: OutcomeOK, Hint: hintIssPromised})
	} else {
		d.rep.add(Step{Check: CheckIssuerParameter, Outcome: OutcomeOK, Hint: hintIssNotPromised})
	}
	e.dpop = slices.Contains(sm.DPoPSigningAlgValuesSupported, dpopAlg)
	if e.dpop {
		d.rep.add(Step{Check: CheckDPoP, Outcome: OutcomeOK, Hint: hintDPoP})
	}
	e.offlineAccess = slices.Contains(sm.ScopesSupported, "offline_access")
	sm.clientMetadata.fill(e)
	return nil
}

// validScopes reports whether every element is a scope-token
// (RFC 6749 §3.3: 1*( %x21 / %x23-5B / %x5D-7E )).
func validScopes(scopes []string) bool {
	for _, s := range scopes {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
				return false
			}
		}
	}
	return true
}

// scopeTokens returns list without duplicates when it is at most maxScopes
// valid scope tokens of at most maxScopeLen bytes each, else nil (a
// metadata document's scopes_supported that is not that is not used).
func scopeTokens(list []string) []string {
	var out []string
	for _, s := range list {
		if len(s) > maxScopeLen || !validScopes([]string{s}) {
			return nil
		}
		out = appendNew(out, s)
	}
	if len(out) > maxScopes {
		return nil
	}
	return out
}
