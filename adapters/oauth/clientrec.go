package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ReasonClientAuthUnsupported (Unsupported): the authorization server
// supports no token endpoint authentication method this client can use
// (none without a secret; client_secret_basic or client_secret_post with
// one; private_key_jwt with a key), or a registration answered with a
// method this package does not implement.
const ReasonClientAuthUnsupported = "client_auth_unsupported"

// clientMetadata is what RFC 8414 authorization server metadata says about
// client authentication and client ids; it is embedded in serverMetadata.
type clientMetadata struct {
	TokenEndpointAuthMethodsSupported     []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgsSupported []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	// ClientIDMetadataDocumentSupported: the server accepts an https URL
	// of a client metadata document as client_id (CIMD).
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported"`
}

// fill copies m into e.
func (m clientMetadata) fill(e *endpoints) {
	e.authMethods = m.TokenEndpointAuthMethodsSupported
	e.signingAlgs = m.TokenEndpointAuthSigningAlgsSupported
	e.cimd = m.ClientIDMetadataDocumentSupported
}

// clientRecordVersion is the version of the stored client layout.
const clientRecordVersion = 1

// Kinds of stored clients.
const (
	clientRegistered    = "registered"    // by dynamic registration (RFC 7591)
	clientPreregistered = "preregistered" // a definition's clientId with a secret or key given at sign-in
)

// clientRecord is one client registration at one issuer for one server
// identity: its id, how it authenticates and the secret or key it needs.
// It is its own value in the token store (clientKey), never in a
// definition, and outlives a sign-out so the revocation request can still
// authenticate. It is never printed.
type clientRecord struct {
	Version  int    `json:"v"`
	Kind     string `json:"kind"`
	Server   string `json:"server"`
	Resource string `json:"resource"`
	Issuer   string `json:"issuer"`
	ClientID string `json:"client_id"`
	// Method is the token endpoint authentication method.
	Method       string `json:"token_endpoint_auth_method"`
	ClientSecret string `json:"client_secret,omitempty"`
	// PrivateKeyPEM, Alg and KeyID are a private_key_jwt client's key.
	PrivateKeyPEM string `json:"private_key_pem,omitempty"`
	Alg           string `json:"alg,omitempty"`
	KeyID         string `json:"kid,omitempty"`
	// RedirectURI is the loopback redirect URI a dynamic registration was
	// made for.
	RedirectURI string `json:"redirect_uri,omitempty"`
	// SecretExpiresAt is when a dynamic registration's secret expires, in
	// seconds since the epoch; 0 means never (or unknown).
	SecretExpiresAt int64 `json:"client_secret_expires_at,omitempty"`
}

// ReasonClientSecretExpired (AuthRequired): the client secret of the
// dynamic registration the credential's client authenticates with has
// expired (its registration said when, client_secret_expires_at): a
// renewal cannot authenticate, and the user must sign in again, which
// registers the client anew.
const ReasonClientSecretExpired = "client_secret_expired"

// expired reports whether cr's secret has expired at now.
func (cr *clientRecord) expired(now time.Time) bool {
	return cr.SecretExpiresAt > 0 && now.Unix() >= cr.SecretExpiresAt
}

// clientKey is the TokenStore key of the client registration of server at
// canonical URL resource with the authorization server issuer.
func clientKey(server, resource, issuer string) string {
	id := url.PathEscape(server)
	if len(id) > maxKeyID {
		h := sha256.Sum256([]byte(server))
		id = "h-" + hex.EncodeToString(h[:16])
	}
	sum := sha256.Sum256([]byte(resource + "\x00" + issuer))
	return "oauth-client/" + id + "/" + hex.EncodeToString(sum[:16])
}

// auth returns how cr authenticates at the token endpoint. A stored key
// that no longer parses is Config ReasonClientKeyInvalid.
func (cr *clientRecord) auth() (clientAuth, error) {
	a := clientAuth{method: cr.Method, id: cr.ClientID, secret: cr.ClientSecret}
	if cr.Method == AuthPrivateKeyJWT {
		k, err := parseSigningKey([]byte(cr.PrivateKeyPEM), cr.Alg, cr.KeyID)
		if err != nil {
			return clientAuth{}, refusal.New(refusal.Config, ReasonClientKeyInvalid, cr.Server)
		}
		a.key = k
	}
	return a, nil
}

// loadClient reads the client registration of server at resource with
// issuer. It returns (nil, nil) when there is none, or when the stored value
// is unreadable or names another server, URL or issuer (it is replaced at
// the next save); Class Transient ReasonStoreUnavailable (or the ctx
// refusal) when the store fails.
func (c *Client) loadClient(ctx context.Context, server, resource, issuer string) (*clientRecord, error) {
	b, err := c.store.Get(ctx, clientKey(server, resource, issuer))
	switch {
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrCorrupt):
		return nil, nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctxRefusal(ctx.Err(), server, "")
		}
		return nil, refusal.New(refusal.Transient, ReasonStoreUnavailable, server)
	}
	var cr clientRecord
	if json.Unmarshal(b, &cr) != nil || cr.Version != clientRecordVersion || cr.Server != server ||
		cr.Resource != resource || cr.Issuer != issuer || cr.ClientID == "" || !knownMethod(cr.Method) {
		return nil, nil
	}
	return &cr, nil
}

// saveClient stores cr under its key, replacing a value the store reports
// corrupt (a client registration can always be made again). Errors: Class
// Transient ReasonStoreUnavailable, or the ctx refusal.
func (c *Client) saveClient(ctx context.Context, cr *clientRecord) error {
	cr.Version = clientRecordVersion
	b, err := json.Marshal(cr)
	if err != nil {
		return refusal.New(refusal.Internal, "encode_failed", cr.Server)
	}
	key := clientKey(cr.Server, cr.Resource, cr.Issuer)
	err = c.store.Set(ctx, key, b)
	if errors.Is(err, ports.ErrCorrupt) {
		if err = c.store.Delete(ctx, key); err == nil {
			err = c.store.Set(ctx, key, b)
		}
	}
	if err != nil {
		return c.storeError(ctx, err, cr.Server)
	}
	return nil
}

// authFor returns how the tokens of rec authenticate at its token endpoint:
// the stored client registration of its issuer when it is rec's client,
// else a public client (none) with rec's client id. Errors are loadClient's
// and clientRecord.auth's, and Class AuthRequired
// ReasonClientSecretExpired when the registration's secret has expired.
func (c *Client) authFor(ctx context.Context, rec *record) (clientAuth, error) {
	cr, err := c.loadClient(ctx, rec.Server, rec.Resource, rec.Issuer)
	if err != nil {
		return clientAuth{}, err
	}
	if cr == nil || cr.ClientID != rec.ClientID {
		return clientAuth{method: AuthNone, id: rec.ClientID}, nil
	}
	if cr.expired(c.now()) {
		return clientAuth{}, refusal.New(refusal.AuthRequired, ReasonClientSecretExpired, rec.Server)
	}
	return cr.auth()
}

// knownMethod reports whether m is a method this package implements.
func knownMethod(m string) bool {
	switch m {
	case AuthNone, AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT:
		return true
	}
	return false
}

// secretMethod returns the method a client with a secret uses at an
// authorization server that supports methods: client_secret_basic when
// it is listed or nothing is (RFC 8414 §2: the default), else
// client_secret_post; ok is false when neither is listed.
func secretMethod(supported []string) (method string, ok bool) {
	switch {
	case len(supported) == 0 || slices.Contains(supported, AuthClientSecretBasic):
		return AuthClientSecretBasic, true
	case slices.Contains(supported, AuthClientSecretPost):
		return AuthClientSecretPost, true
	}
	return "", false
}

// publicOK reports whether a client without a secret may use "none" at an
// authorization server that supports methods. An empty list means the
// RFC 8414 default (client_secret_basic), but a public client has nothing
// else to try, so it is accepted.
func publicOK(supported []string) bool {
	return len(supported) == 0 || slices.Contains(supported, AuthNone)
}

// registrationMethod is the token_endpoint_auth_method a dynamic
// registration asks for: none when the server allows it, else the secret
// method it supports.
func registrationMethod(supported []string) string {
	if publicOK(supported) {
		return AuthNone
	}
	if m, ok := secretMethod(supported); ok {
		return m
	}
	return AuthNone
}

// ForgetClient deletes the client registration stored for s at the
// authorization server discovery finds for it (a dynamic registration, or a
// pre-registered client's secret or key), so the next sign-in registers
// anew or needs the secret again. The credential, if any, is kept. It
// returns nil when none is stored. Errors: those of discovery; Class
// Transient ReasonStoreUnavailable (or the ctx refusal) when the store
// fails. Safe for concurrent use.
func (c *Client) ForgetClient(ctx context.Context, s Server) error {
	ep, err := c.discover(ctx, s, "")
	if err != nil {
		return err
	}
	err = c.store.Delete(ctx, clientKey(s.ID, ep.resource, ep.issuer))
	switch {
	case err == nil, errors.Is(err, ports.ErrNotFound):
		return nil
	case ctx.Err() != nil:
		return ctxRefusal(ctx.Err(), s.ID, "")
	}
	return refusal.New(refusal.Transient, ReasonStoreUnavailable, s.ID)
}
