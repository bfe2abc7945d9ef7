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
	AuthorizationEndpoint         string   `json:"authorization_endpoint"`
	TokenEndpoint                 string   `json:"token_endpoint"`
	RegistrationEndpoint          string   `json:"registration_endpoint"`
	RevocationEndpoint            string   `json:"revocation_endpoint"`
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	ISSParameterSupported         bool     `json:"authorization_response_iss_parameter_supported"`
	clientMetadata
}

// discover establishes, and checks link by link, the endpoints of s.
// challenge is the WWW-Authenticate value of the server's 401 ("" when
// there is none, as at sign-in); a Bearer resource_metadata in it is
// followed instead of the well-known locations, and its scope, when it is
// a list of valid scope tokens, replaces scopes_supported. A challenge that
// is malformed or has no Bearer challenge is ignored. It is safe for
// concurrent use.
//
// The protected-resource metadata (RFC 9728) is fetched from the
// challenge's link, else from the path-inserted well-known location and
// then the root one; its resource must be s's canonical URL and its first
// authorization server is the issuer. The issuer's metadata is fetched
// from its RFC 8414 and OpenID Connect discovery locations, in the order
// the MCP 2025-11-25 authorization spec gives, or from s.MetadataURL alone
// when set (see serverMetadataAt).
//
// Errors, each naming s.ID and, for the server's documents, the server's
// origin, for the authorization server's, its origin:
//   - Config ReasonURLInvalid: s.URL or s.MetadataURL is not an absolute
//     https URL without userinfo or fragment;
//   - Refused ReasonInsecureEndpoint: the challenge's resource_metadata,
//     the issuer, or an endpoint is not an absolute https URL (an issuer
//     also must have no query, RFC 8414 §2);
//   - Unsupported ReasonResourceMetadataUnavailable: every location
//     answered 4xx (with s.MetadataURL set, discovery goes on without it);
//   - Refused ReasonResourceMismatch: the resource is not s's;
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
func (c *Client) discover(ctx context.Context, s Server, challenge string) (*endpoints, error) {
	resource, origin, err := canonicalURL(s.URL, s.ID)
	if err != nil {
		return nil, err
	}
	var metadataURL *url.URL
	if s.MetadataURL != "" {
		if _, _, err := canonicalURL(s.MetadataURL, s.ID); err != nil {
			return nil, err
		}
		if metadataURL, err = url.Parse(s.MetadataURL); err != nil {
			return nil, refuse(refusal.Config, ReasonURLInvalid, s.ID, "")
		}
	}

	link, chScope, _ := parseChallenge(challenge)
	rm, err := c.resourceMetadata(ctx, s.ID, resource, origin, link)
	if err != nil {
		if metadataURL == nil || refusal.ReasonOf(err) != ReasonResourceMetadataUnavailable {
			return nil, err
		}
		rm = nil // MetadataURL names the authorization server; go on without it
	}

	e := &endpoints{resource: resource, origin: origin}
	if rm != nil {
		e.scopes = rm.ScopesSupported
	}
	if scopes := strings.Fields(chScope); len(scopes) > 0 && validScopes(scopes) {
		e.scopes = scopes
	}

	var sm *serverMetadata
	if metadataURL != nil {
		if sm, err = c.serverMetadataAt(ctx, s.ID, s.MetadataURL, metadataURL); err != nil {
			return nil, err
		}
		if rm != nil && len(rm.AuthorizationServers) > 0 && !slices.Contains(rm.AuthorizationServers, sm.Issuer) {
			return nil, refuse(refusal.Refused, ReasonIssuerMismatch, s.ID, originOf(sm.Issuer))
		}
	} else {
		if len(rm.AuthorizationServers) == 0 {
			return nil, refuse(refusal.Unsupported, ReasonAuthorizationServerMissing, s.ID, origin)
		}
		issuer := rm.AuthorizationServers[0]
		if _, err := issuerURL(issuer, s.ID); err != nil {
			return nil, refuse(refusal.Refused, ReasonInsecureEndpoint, s.ID, origin)
		}
		if sm, err = c.serverMetadataFor(ctx, s.ID, issuer); err != nil {
			return nil, err
		}
	}
	if err := checkServerMetadata(sm, e, s.ID); err != nil {
		return nil, err
	}
	return e, nil
}

// resourceMetadata fetches the RFC 9728 document of the server whose
// canonical URL is resource and origin origin: from link (a challenge's
// resource_metadata) when it is not "", else from the path-inserted
// well-known location and then, when it differs, the root one. A 4xx moves
// on to the next location. It checks that the document's resource is
// resource (canonically compared).
//
// Errors name server and origin: Refused ReasonInsecureEndpoint (link is
// not an absolute https URL), Unsupported
// ReasonResourceMetadataUnavailable (4xx everywhere), Protocol
// ReasonMetadataInvalid (not a JSON object, or a status neither 200 nor
// 4xx), Refused ReasonResourceMismatch; c.get's errors as they are.
func (c *Client) resourceMetadata(ctx context.Context, server, resource, origin, link string) (*resourceMetadata, error) {
	var locations []*url.URL
	if link != "" {
		u, err := httpsURL(link, server)
		if err != nil {
			return nil, refuse(refusal.Refused, ReasonInsecureEndpoint, server, origin)
		}
		locations = []*url.URL{u}
	} else {
		locations = resourceLocations(resource)
	}
	for _, u := range locations {
		resp, err := c.get(ctx, server, u)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.status >= 400 && resp.status < 500:
			continue
		case resp.status != http.StatusOK:
			return nil, refuse(refusal.Protocol, ReasonMetadataInvalid, server, origin)
		}
		var rm resourceMetadata
		if err := decodeObject(resp, &rm, server, origin); err != nil {
			return nil, err
		}
		if got, _, err := canonicalURL(rm.Resource, server); err != nil || got != resource {
			return nil, refuse(refusal.Refused, ReasonResourceMismatch, server, origin)
		}
		return &rm, nil
	}
	return nil, refuse(refusal.Unsupported, ReasonResourceMetadataUnavailable, server, origin)
}

// resourceLocations returns the RFC 9728 §3.1 well-known locations of the
// canonical URL resource, in the order they are tried: the well-known
// path inserted between host and path (the query kept), then the root
// location when it differs.
func resourceLocations(resource string) []*url.URL {
	u, err := url.Parse(resource)
	if err != nil {
		return nil
	}
	first := "https://" + u.Host + wellKnownResource + u.EscapedPath()
	if u.RawQuery != "" {
		first += "?" + u.RawQuery
	}
	root := "https://" + u.Host + wellKnownResource
	raw := []string{first}
	if root != first {
		raw = append(raw, root)
	}
	var out []*url.URL
	for _, r := range raw {
		if l, err := url.Parse(r); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// issuerURL parses an issuer identifier, which must be an absolute https
// URL without userinfo, fragment or query (RFC 8414 §2); otherwise it
// returns Class Refused, Reason ReasonInsecureEndpoint, naming no origin.
func issuerURL(issuer, server string) (*url.URL, error) {
	u, err := httpsURL(issuer, server)
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
func (c *Client) serverMetadataFor(ctx context.Context, server, issuer string) (*serverMetadata, error) {
	iu, err := issuerURL(issuer, server)
	if err != nil {
		return nil, err
	}
	asOrigin := originOf(issuer)
	for _, loc := range serverLocations(iu) {
		u, err := url.Parse(loc)
		if err != nil {
			continue
		}
		sm, found, err := c.fetchServerMetadata(ctx, server, u, asOrigin)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if sm.Issuer != issuer {
			return nil, refuse(refusal.Refused, ReasonIssuerMismatch, server, asOrigin)
		}
		return sm, nil
	}
	return nil, refuse(refusal.Unsupported, ReasonServerMetadataUnavailable, server, asOrigin)
}

// serverMetadataAt fetches the authorization server metadata at exactly
// raw (a definition's MetadataURL, already checked to be https, and u its
// parse) and checks that the issuer it names is an issuerURL one of whose
// serverLocations is raw, string for string.
//
// Errors name server and the authorization server's origin: Unsupported
// ReasonServerMetadataUnavailable (4xx), Protocol ReasonMetadataInvalid,
// Refused ReasonInsecureEndpoint (the issuer is not https, or has a
// query), Refused ReasonIssuerMismatch; c.get's errors as they are.
func (c *Client) serverMetadataAt(ctx context.Context, server, raw string, u *url.URL) (*serverMetadata, error) {
	asOrigin := originOf(raw)
	sm, found, err := c.fetchServerMetadata(ctx, server, u, asOrigin)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, refuse(refusal.Unsupported, ReasonServerMetadataUnavailable, server, asOrigin)
	}
	iu, err := issuerURL(sm.Issuer, server)
	if err != nil {
		return nil, refuse(refusal.Refused, ReasonInsecureEndpoint, server, asOrigin)
	}
	if !slices.Contains(serverLocations(iu), raw) {
		return nil, refuse(refusal.Refused, ReasonIssuerMismatch, server, asOrigin)
	}
	return sm, nil
}

// fetchServerMetadata GETs u and decodes an authorization server metadata
// document; found is false on a 4xx. Errors name server and asOrigin:
// Protocol ReasonMetadataInvalid (not a JSON object, or a status neither
// 200 nor 4xx); c.get's errors as they are.
func (c *Client) fetchServerMetadata(ctx context.Context, server string, u *url.URL, asOrigin string) (sm *serverMetadata, found bool, err error) {
	resp, err := c.get(ctx, server, u)
	if err != nil {
		return nil, false, err
	}
	switch {
	case resp.status >= 400 && resp.status < 500:
		return nil, false, nil
	case resp.status != http.StatusOK:
		return nil, false, refuse(refusal.Protocol, ReasonMetadataInvalid, server, asOrigin)
	}
	sm = new(serverMetadata)
	if err := decodeObject(resp, sm, server, asOrigin); err != nil {
		return nil, false, err
	}
	return sm, true, nil
}

// checkServerMetadata checks sm, whose issuer is already checked, and
// fills e's issuer, endpoints and issParameter from it. Errors name server
// and the issuer's origin: Refused ReasonPKCEUnsupported (no S256 in
// code_challenge_methods_supported), Unsupported ReasonEndpointMissing (no
// authorization or token endpoint), Refused ReasonInsecureEndpoint (an
// endpoint present that is not an absolute https URL).
func checkServerMetadata(sm *serverMetadata, e *endpoints, server string) error {
	asOrigin := originOf(sm.Issuer)
	if !slices.Contains(sm.CodeChallengeMethodsSupported, "S256") {
		return refuse(refusal.Refused, ReasonPKCEUnsupported, server, asOrigin)
	}
	if sm.AuthorizationEndpoint == "" || sm.TokenEndpoint == "" {
		return refuse(refusal.Unsupported, ReasonEndpointMissing, server, asOrigin)
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
		u, err := httpsURL(ep.raw, server)
		if err != nil {
			return refuse(refusal.Refused, ReasonInsecureEndpoint, server, asOrigin)
		}
		*ep.dst = u
	}
	e.issuer = sm.Issuer
	e.issParameter = sm.ISSParameterSupported
	sm.clientMetadata.fill(e)
	return nil
}

// validScopes reports whether every element is a scope-token
// (RFC 6749 §3.3: 1*( %x21 / %x23-5B / %x5D-7E )).
func validScopes(scopes []string) bool {
	for _, s := range scopes {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
				return false
			}
		}
	}
	return true
}
