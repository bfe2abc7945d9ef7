package oauth

import (
	"context"
	"net/http"

	"github.com/mcpward/mcpward/core/refusal"
)

// registrationRequest is the RFC 7591 §2 client metadata of a native client
// using the authorization code grant with PKCE.
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	ApplicationType         string   `json:"application_type"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// registrationResponse is the part of an RFC 7591 §3.2.1 answer this package
// reads.
type registrationResponse struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	// ClientSecretExpiresAt is when the secret expires, in seconds since
	// the epoch; 0 or absent means never (RFC 7591 §3.2.1).
	ClientSecretExpiresAt float64 `json:"client_secret_expires_at"`
}

// register registers a client for redirectURI at ep.registration (RFC
// 7591), as the Options.ApplicationType application (OpenID Connect
// Dynamic Client Registration application_type, MCP SEP-837: native for a
// loopback redirect, unless the host says web), asking for
// token_endpoint_auth_method none when the authorization server supports
// it (else the secret method it supports), and returns the registration:
// the client id, and the method the answer names (the one asked for when
// it names none) with the client secret it needs and when that expires
// (client_secret_expires_at). A secret issued to a client registered as
// none is dropped. The caller stores it.
//
// Errors name s.ID and the registration endpoint's origin: Unsupported
// ReasonRegistrationUnavailable when ep has no registration endpoint;
// Refused ReasonRegistrationRefused for a 4xx answer; Protocol
// ReasonMetadataInvalid for any other status than 200 or 201, a body that is
// not a JSON object, one without a string client_id, or a secret method
// without a client_secret; Unsupported ReasonClientAuthUnsupported for a
// method this package does not implement (private_key_jwt is never
// registered: it needs a key the host holds); otherwise the errors of
// Client.postJSON (redirects refused, Transient for network, 429 and 5xx).
// Safe for concurrent use.
func (c *Client) register(ctx context.Context, s Server, resource string, ep *endpoints, redirectURI string) (*clientRecord, error) {
	if ep.registration == nil {
		return nil, refuse(refusal.Unsupported, ReasonRegistrationUnavailable, s.ID, ep.origin)
	}
	origin := c.urls.origin(ep.registration.String())
	asked := registrationMethod(ep.authMethods)
	resp, err := c.postJSON(ctx, s.ID, ep.registration, registrationRequest{
		ClientName:              c.clientName,
		ApplicationType:         c.appType,
		RedirectURIs:            []string{redirectURI},
		GrantTypes:              []string{grantAuthorizationCode, grantRefreshToken},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: asked,
	})
	if err != nil {
		return nil, err
	}
	switch {
	case resp.status >= 400 && resp.status < 500:
		return nil, refuse(refusal.Refused, ReasonRegistrationRefused, s.ID, origin)
	case resp.status != http.StatusOK && resp.status != http.StatusCreated:
		return nil, refuse(refusal.Protocol, ReasonMetadataInvalid, s.ID, origin)
	}
	var rr registrationResponse
	if err := decodeObject(resp, &rr, s.ID, origin); err != nil {
		return nil, err
	}
	if rr.ClientID == "" {
		return nil, refuse(refusal.Protocol, ReasonMetadataInvalid, s.ID, origin)
	}
	cr := &clientRecord{
		Kind: clientRegistered, Server: s.ID, Resource: resource, Issuer: ep.issuer,
		ClientID: rr.ClientID, Method: rr.TokenEndpointAuthMethod, RedirectURI: redirectURI,
	}
	if cr.Method == "" {
		cr.Method = asked
	}
	switch cr.Method {
	case AuthNone:
	case AuthClientSecretBasic, AuthClientSecretPost:
		if rr.ClientSecret == "" {
			return nil, refuse(refusal.Protocol, ReasonMetadataInvalid, s.ID, origin)
		}
		cr.ClientSecret = rr.ClientSecret
		if rr.ClientSecretExpiresAt > 0 && rr.ClientSecretExpiresAt < 1e11 {
			cr.SecretExpiresAt = int64(rr.ClientSecretExpiresAt)
		}
	default:
		return nil, refuse(refusal.Unsupported, ReasonClientAuthUnsupported, s.ID, origin)
	}
	return cr, nil
}
