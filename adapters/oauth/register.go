package oauth

import (
	"context"
	"net/http"

	"github.com/mcpward/mcpward/core/refusal"
)

// registrationRequest is the RFC 7591 §2 client metadata of a public,
// native client using the authorization code grant with PKCE.
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// registrationResponse is the part of an RFC 7591 §3.2.1 answer this package
// reads. A client_secret the server issues anyway is not even decoded: the
// client stays public.
type registrationResponse struct {
	ClientID string `json:"client_id"`
}

// clientID returns the public client id to sign in to s with: s.ClientID
// when the definition names one (nothing is sent), else the client id a
// dynamic registration (RFC 7591) for redirectURI obtains. Errors are those
// of register. Safe for concurrent use.
func (c *Client) clientID(ctx context.Context, s Server, ep *endpoints, redirectURI string) (string, error) {
	if s.ClientID != "" {
		return s.ClientID, nil
	}
	return c.register(ctx, s, ep, redirectURI)
}

// register registers a public client (token_endpoint_auth_method "none")
// for redirectURI at ep.registration and returns its client id; any client
// secret in the answer is dropped.
//
// Errors name s.ID and the registration endpoint's origin: Unsupported
// ReasonRegistrationUnavailable when ep has no registration endpoint;
// Refused ReasonRegistrationRefused for a 4xx answer; Protocol
// ReasonMetadataInvalid for any other status than 200 or 201, a body that is
// not a JSON object, or one without a string client_id; otherwise the errors
// of Client.postJSON (redirects refused, Transient for network, 429 and
// 5xx). Safe for concurrent use.
func (c *Client) register(ctx context.Context, s Server, ep *endpoints, redirectURI string) (string, error) {
	if ep.registration == nil {
		return "", refuse(refusal.Unsupported, ReasonRegistrationUnavailable, s.ID, ep.origin)
	}
	origin := originOf(ep.registration.String())
	resp, err := c.postJSON(ctx, s.ID, ep.registration, registrationRequest{
		ClientName:              c.clientName,
		RedirectURIs:            []string{redirectURI},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
	})
	if err != nil {
		return "", err
	}
	switch {
	case resp.status >= 400 && resp.status < 500:
		return "", refuse(refusal.Refused, ReasonRegistrationRefused, s.ID, origin)
	case resp.status != http.StatusOK && resp.status != http.StatusCreated:
		return "", refuse(refusal.Protocol, ReasonMetadataInvalid, s.ID, origin)
	}
	var rr registrationResponse
	if err := decodeObject(resp, &rr, s.ID, origin); err != nil {
		return "", err
	}
	if rr.ClientID == "" {
		return "", refuse(refusal.Protocol, ReasonMetadataInvalid, s.ID, origin)
	}
	return rr.ClientID, nil
}
