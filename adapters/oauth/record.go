package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// recordVersion is the version of the stored credential layout.
const recordVersion = 1

// record is one stored credential: the tokens and everything a refresh,
// a revocation and a later check need, bound to one server id and one
// canonical server URL. It is stored as JSON under storeKey.
type record struct {
	Version int `json:"v"`
	// Server and Resource are the server id and canonical URL it is for.
	Server   string `json:"server"`
	Resource string `json:"resource"`
	// Indicator is the RFC 8707 resource indicator the tokens were
	// requested for, exactly as the protected-resource metadata publishes
	// it; "" means Resource (a credential stored before it was kept, or
	// one obtained without resource metadata).
	Indicator string `json:"indicator,omitempty"`
	// Issuer, TokenEndpoint and RevocationEndpoint are from the metadata
	// the tokens were obtained with; a refresh goes only to TokenEndpoint.
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"token_endpoint"`
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	// ClientID is the client the tokens belong to; how it authenticates
	// is in its client registration (clientKey), when it has one.
	ClientID string `json:"client_id"`

	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scope        string    `json:"scope,omitempty"`
	// Received is when the access token was received; zero for a
	// credential stored before it was kept.
	Received time.Time `json:"received,omitzero"`
	// Requested are the scopes the sign-in asked for (a later step-up
	// asks for them again, with the ones the server then names).
	Requested []string `json:"requested,omitempty"`
	// TokenType is tokenTypeDPoP when the tokens are bound to the proof
	// key whose RFC 7638 thumbprint is DPoPJKT (stored beside the
	// credential, proofKeyKey); "" means Bearer.
	TokenType string `json:"token_type,omitempty"`
	DPoPJKT   string `json:"dpop_jkt,omitempty"`
	// Grant is "client_credentials" when the tokens came from that grant:
	// without a refresh token they are renewed by the same grant, with the
	// stored client registration. It is grantJWTBearer for a workload
	// identity sign-in: renewed by the same grant with a JWT read again
	// from WorkloadFile (when the sign-in read one; a command's JWT is
	// never stored, nor is the command).
	Grant string `json:"grant,omitempty"`
	// WorkloadFile and WorkloadIssuer are the token file of a workload
	// identity sign-in and the issuer its JWTs must name ("" for any).
	WorkloadFile   string `json:"workload_file,omitempty"`
	WorkloadIssuer string `json:"workload_issuer,omitempty"`
	// StepUps is how many sign-ins in a row, each within stepUpWindow of
	// the credential it replaced, answered a step-up (see maxStepUps).
	StepUps int `json:"step_ups,omitempty"`
}

// indicator returns the resource indicator of r's tokens.
func (r *record) indicator() string {
	if r.Indicator != "" {
		return r.Indicator
	}
	return r.Resource
}

// dpop reports whether r's tokens are bound to a proof key.
func (r *record) dpop() bool { return r.TokenType == tokenTypeDPoP }

// renewable reports whether r's access token can be renewed without the
// user: by its refresh token, or by the client credentials grant.
func (r *record) renewable() bool {
	return r.RefreshToken != "" || r.Grant == grantClientCredentials ||
		(r.Grant == grantJWTBearer && r.WorkloadFile != "")
}

// storeKey is the TokenStore key of the credential of server at canonical
// URL resource: both are part of it, so a definition that shadows another
// under the same id but another URL (or the same URL under another id)
// finds no credential.
//
// The key stays within ports.MaxKeyLen whatever the id: an id whose
// escaped form is longer than maxKeyID is replaced by its hash.
func storeKey(server, resource string) string {
	id := url.PathEscape(server)
	if len(id) > maxKeyID {
		h := sha256.Sum256([]byte(server))
		id = "h-" + hex.EncodeToString(h[:16])
	}
	sum := sha256.Sum256([]byte(resource))
	return "oauth/" + id + "/" + hex.EncodeToString(sum[:16])
}

// maxKeyID is the longest escaped server id a store key spells out.
const maxKeyID = 128

// lockKey is the Locker key that serializes refreshes of one credential.
func lockKey(server, resource string) string {
	return storeKey(server, resource) + ".refresh"
}

// valid reports whether r's access token is usable at now (no expiry means
// it is, until the server refuses it): until ExpirySkew before its expiry,
// or, for a token that lived less than 2*ExpirySkew when it was received,
// until its expiry itself — refreshing such a token ahead of time would
// refresh it before every request (the refresh floor: at most one refresh
// per token lifetime).
func (r *record) valid(now time.Time) bool {
	if r.AccessToken == "" {
		return false
	}
	if r.Expiry.IsZero() {
		return true
	}
	skew := ExpirySkew
	if !r.Received.IsZero() && r.Expiry.Sub(r.Received) < 2*ExpirySkew {
		skew = 0
	}
	return now.Add(skew).Before(r.Expiry)
}

// same reports whether r and o hold the same tokens.
func (r *record) same(o *record) bool {
	return o != nil && r.AccessToken == o.AccessToken && r.RefreshToken == o.RefreshToken
}

// load reads the credential of server at resource from the store, and
// caches what it read (a credential; its absence or a failure drops the
// cached one). It returns (nil, nil)
// when there is none; Class Config ReasonCredentialCorrupt when the stored
// value is unreadable or belongs to another server or URL; Class Transient
// ReasonStoreUnavailable when the store fails.
func (c *Client) load(ctx context.Context, server, resource string) (*record, error) {
	r, err := c.read(ctx, server, resource)
	if err != nil || r == nil {
		c.forget(storeKey(server, resource))
		return r, err
	}
	c.remember(r)
	return r, nil
}

// read is load without the cache.
func (c *Client) read(ctx context.Context, server, resource string) (*record, error) {
	b, err := c.store.Get(ctx, storeKey(server, resource))
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return nil, nil
	case errors.Is(err, ports.ErrCorrupt):
		return nil, refusal.New(refusal.Config, ReasonCredentialCorrupt, server)
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctxRefusal(ctx.Err(), server, "")
		}
		return nil, refusal.New(refusal.Transient, ReasonStoreUnavailable, server)
	}
	var r record
	if json.Unmarshal(b, &r) != nil || r.Version != recordVersion || r.Server != server || r.Resource != resource ||
		r.AccessToken == "" || r.TokenEndpoint == "" {
		return nil, refusal.New(refusal.Config, ReasonCredentialCorrupt, server)
	}
	return &r, nil
}

// loadCached returns the credential of server at resource as load does,
// but from the cache when this Client read or wrote it less than
// c.cacheTTL ago. Only a credential is cached, never its absence or a
// failure, so a sign-in elsewhere is seen at once.
func (c *Client) loadCached(ctx context.Context, server, resource string) (*record, error) {
	key := storeKey(server, resource)
	now := c.now()
	if c.cacheTTL > 0 {
		c.mu.Lock()
		e, ok := c.cache[key]
		c.mu.Unlock()
		if ok && now.Sub(e.at) < c.cacheTTL && !now.Before(e.at) {
			return e.rec, nil
		}
	}
	return c.load(ctx, server, resource)
}

// remember caches a copy of r as the current credential of its key.
func (c *Client) remember(r *record) {
	if c.cacheTTL <= 0 {
		return
	}
	cp := *r
	c.mu.Lock()
	c.cache[storeKey(r.Server, r.Resource)] = cached{rec: &cp, at: c.now()}
	c.mu.Unlock()
}

// forget drops the cached credential of key.
func (c *Client) forget(key string) {
	c.mu.Lock()
	delete(c.cache, key)
	c.mu.Unlock()
}

// save stores r under its key (and caches it). Errors: Class Config ReasonCredentialCorrupt
// when the store holds an unreadable value there (it is never overwritten
// silently; SignOut deletes it), Class Transient ReasonStoreUnavailable
// otherwise.
func (c *Client) save(ctx context.Context, r *record) error {
	r.Version = recordVersion
	b, err := json.Marshal(r)
	if err != nil {
		return refusal.New(refusal.Internal, "encode_failed", r.Server)
	}
	if err := c.store.Set(ctx, storeKey(r.Server, r.Resource), b); err != nil {
		return c.storeError(ctx, err, r.Server)
	}
	c.remember(r)
	return nil
}

// storeError maps a failed Set of the token store: Class Refused
// ReasonTokenTooLarge for ports.ErrValueTooLarge (retrying cannot help:
// the server issued a credential larger than the store keeps), Class
// Config ReasonCredentialCorrupt for ports.ErrCorrupt, the ctx refusal
// when ctx ended, else Class Transient ReasonStoreUnavailable.
func (c *Client) storeError(ctx context.Context, err error, server string) error {
	switch {
	case errors.Is(err, ports.ErrValueTooLarge):
		return &refusal.Error{Class: refusal.Refused, Reason: ReasonTokenTooLarge, Server: server,
			Detail: "the credential is larger than the token store keeps"}
	case errors.Is(err, ports.ErrCorrupt):
		return refusal.New(refusal.Config, ReasonCredentialCorrupt, server)
	case ctx.Err() != nil:
		return ctxRefusal(ctx.Err(), server, "")
	}
	return refusal.New(refusal.Transient, ReasonStoreUnavailable, server)
}

// saveLocked stores r, a credential from a new sign-in, under its refresh
// lock, so it never lands between another process's refresh and the save
// of that refresh's answer (which would then overwrite it). key, when not
// nil, is r's proof key: it is stored first, beside the credential, so a
// credential is never stored before the key it is bound to. A step-up
// saved for r's server is then deleted: this sign-in asked for it. The
// lock is waited for at most c.lockTimeout: a wait that times out or whose
// ctx ends is Class Transient, ReasonLockTimeout (nothing is saved), any
// other locker failure Class Transient, ReasonStoreUnavailable; then
// save's refusals.
func (c *Client) saveLocked(ctx context.Context, r *record, key *proofKey) error {
	lctx, cancel := context.WithTimeout(ctx, c.lockTimeout)
	defer cancel()
	unlock, err := c.locker.Lock(lctx, lockKey(r.Server, r.Resource))
	if err != nil {
		if errors.Is(err, ports.ErrLockTimeout) || lctx.Err() != nil {
			return refusal.New(refusal.Transient, ReasonLockTimeout, r.Server)
		}
		return refusal.New(refusal.Transient, ReasonStoreUnavailable, r.Server)
	}
	defer func() { _ = unlock() }()
	if key != nil {
		if err := c.saveProofKey(ctx, r.Server, r.Resource, key); err != nil {
			return err
		}
	}
	if err := c.save(ctx, r); err != nil {
		return err
	}
	c.clearStepUp(ctx, storeKey(r.Server, r.Resource))
	return nil
}

// deleteCredential deletes the credential of server at resource, then
// its proof key (tokens first: a credential is never left without its
// key, while a key left without its credential binds nothing), and drops
// them from the caches. A key that is not there is no failure. Errors:
// Class Transient ReasonStoreUnavailable, or the ctx refusal.
func (c *Client) deleteCredential(ctx context.Context, server, resource, jkt string) error {
	key := storeKey(server, resource)
	c.forget(key)
	for _, k := range []string{key, proofKeyKey(key)} {
		if err := c.store.Delete(ctx, k); err != nil && !errors.Is(err, ports.ErrNotFound) {
			if ctx.Err() != nil {
				return ctxRefusal(ctx.Err(), server, "")
			}
			return refusal.New(refusal.Transient, ReasonStoreUnavailable, server)
		}
	}
	if jkt != "" {
		c.keys.drop(jkt)
	}
	return nil
}
