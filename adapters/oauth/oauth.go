package oauth

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Server is what a definition says about one OAuth-protected MCP server.
type Server struct {
	// ID is the server id (the definition's name).
	ID string
	// URL is the MCP endpoint; it must be an absolute https URL (or an
	// http loopback one under Options.AllowLoopbackHTTP).
	URL string
	// ClientID is a pre-registered client id; "" means a client id
	// metadata document (ClientMetadataURL) or dynamic client registration
	// (RFC 7591). A client secret is never taken from a definition: it is
	// given at sign-in (SignInOptions.ClientSecret) and kept in the token
	// store.
	ClientID string
	// ClientMetadataURL, when set and ClientID is not, is the https URL of
	// this client's metadata document, used as its client_id when the
	// authorization server advertises client_id_metadata_document_supported
	// (else dynamic registration is used).
	ClientMetadataURL string
	// Scopes are requested at sign-in; nil means the scopes_supported of
	// the protected-resource metadata, if any.
	Scopes []string
	// CallbackPort is the loopback port of the redirect listener; 0 means
	// any free port.
	CallbackPort int
	// MetadataURL, when set, is the authorization server metadata URL,
	// used instead of the one protected-resource discovery leads to. It
	// must be an https URL at one of the RFC 8414 or OpenID Connect
	// discovery locations of the issuer its metadata names.
	MetadataURL string
	// DisableDPoP turns DPoP (RFC 9449) off for this server: its tokens
	// are Bearer tokens even where the authorization server advertises
	// DPoP. It is the host's choice, never a definition's; false (the
	// default) binds the tokens to a proof key whenever the authorization
	// server lists ES256 in dpop_signing_alg_values_supported.
	DisableDPoP bool
}

// ClientFunc returns the http.Client for requests to u's origin: for a
// deployment, an admitted client (egress policy applied to the URL and to
// every dialled address, no proxy). The package refuses redirects itself,
// whatever the client's CheckRedirect says, and never sends a request to a
// URL that is not https (but for Options.AllowLoopbackHTTP's loopback
// hosts).
type ClientFunc func(ctx context.Context, u *url.URL) (*http.Client, error)

// Defaults of Options.
const (
	// DefaultLockTimeout bounds the wait for a credential's refresh lock.
	DefaultLockTimeout = 30 * time.Second
	// DefaultMaxResponseBytes bounds every response body read.
	DefaultMaxResponseBytes = 1 << 20
	// DefaultClientName is the client_name of a dynamic registration.
	DefaultClientName = "mcpward"
	// ExpirySkew is how long before its expiry an access token counts as
	// expired, so a request does not race it.
	ExpirySkew = 30 * time.Second
	// DefaultCacheTTL is the default of Options.CacheTTL. Reading the
	// store costs tens of microseconds on files and a D-Bus round trip on
	// a keychain, for every request; BENCHMARKS.md has the figures.
	DefaultCacheTTL = time.Second
	// DefaultRequestTimeout is the default of Options.RequestTimeout.
	DefaultRequestTimeout = 30 * time.Second
)

// Application types of a dynamic client registration (OpenID Connect
// Dynamic Client Registration 1.0 §2, MCP SEP-837).
const (
	// ApplicationNative: a client on the user's device whose redirect URI
	// is a loopback one; the default.
	ApplicationNative = "native"
	// ApplicationWeb: a client running on a web server, whose redirect
	// URIs are https ones. Only a host that is one says so.
	ApplicationWeb = "web"
)

// Options configures a Client. Client, Store and Locker are required; every
// other zero field means the default documented on it.
type Options struct {
	// Client returns the http.Client for one origin.
	Client ClientFunc
	// Store keeps credentials, one value per server id and canonical URL.
	Store ports.TokenStore
	// Locker coordinates refreshes of one credential across goroutines and
	// processes sharing Store.
	Locker ports.Locker
	// Now is the clock used for expiry; nil means time.Now.
	Now func() time.Time
	// LockTimeout bounds the wait for the refresh lock; 0 means
	// DefaultLockTimeout. A timeout fails closed (ReasonLockTimeout).
	LockTimeout time.Duration
	// MaxResponseBytes bounds every response body; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// ClientName is sent as client_name when registering; "" means
	// DefaultClientName.
	ClientName string
	// CacheTTL is how long a credential read from Store is used for a
	// request's headers before Store is read again; 0 means
	// DefaultCacheTTL, negative means Store is read for every request.
	// A sign-in, refresh or sign-out through this Client updates the
	// cached credential at once; one done by another process is seen
	// within CacheTTL, or at once when the server refuses the token
	// (Refused always reads Store).
	CacheTTL time.Duration
	// RequestTimeout bounds every request of this package (metadata,
	// registration, token, token exchange, revocation) from its start to
	// the end of reading its answer; 0 means DefaultRequestTimeout. A
	// request that runs out is Class Transient, "deadline_exceeded".
	RequestTimeout time.Duration
	// ApplicationType is the application_type of a dynamic registration:
	// ApplicationNative (the default, for "") or ApplicationWeb. Any
	// other value is refused by New.
	ApplicationType string
	// AllowLoopbackHTTP is for tests and the MCP conformance client only,
	// never a deployment: it lets the MCP server URL and every URL of
	// discovery, registration, tokens and revocation be http when its host
	// is exactly localhost, 127.0.0.1 or [::1]. Every other URL stays https
	// only. The scheme is part of canonical URLs, so an http server's
	// credential is never used for an https one, nor the reverse. false
	// (the default) means https everywhere.
	AllowLoopbackHTTP bool
	// Step, when not nil, is told as a step of this Client begins:
	// StepSignIn (a sign-in, from its discovery to its tokens stored or
	// its failure) and StepRefresh (a credential's renewal, from the
	// refresh lock to the renewed credential or the refusal). The step
	// runs under the context Step returns (derived from the one it was
	// given), and the func Step returns is called exactly once with the
	// step's outcome: nil, or the *refusal.Error the caller gets. Step is
	// for tracing: it is called on the caller's goroutine, must return
	// quickly, and sees no URL, token, code, header or secret. nil (the
	// default) costs nothing.
	Step func(ctx context.Context, step string) (context.Context, func(error))
}

// The steps Options.Step is told of.
const (
	// StepSignIn is a sign-in: SignInWith, SignInWithOptions,
	// SignInClientCredentials, SignInEnterpriseManaged,
	// SignInWorkloadIdentity, or a SignIn from BeginSignIn or
	// BeginSignInWithOptions, which ends when its redirect's outcome is
	// known, when Wait ends without one inside SignInWith, or at Close
	// (Transient "canceled" then).
	StepSignIn = "sign_in"
	// StepRefresh is the renewal of an expired credential (a refresh
	// token, or the client credentials or workload grant again), once
	// per renewal across the goroutines that wait for it.
	StepRefresh = "refresh"
)

// noStep is the end of a step nobody watches.
func noStep(error) {}

// step begins step: Options.Step's context and end, or ctx and noStep
// when there is no Step.
func (c *Client) step(ctx context.Context, step string) (context.Context, func(error)) {
	if c.stepFn == nil {
		return ctx, noStep
	}
	sctx, end := c.stepFn(ctx, step)
	if sctx == nil {
		sctx = ctx
	}
	if end == nil {
		end = noStep
	}
	return sctx, end
}

// Client is the OAuth client of one deployment. It is safe for concurrent
// use; coordination between processes goes through Options.Locker.
type Client struct {
	client      ClientFunc
	store       ports.TokenStore
	locker      ports.Locker
	now         func() time.Time
	lockTimeout time.Duration
	maxBody     int64
	clientName  string
	cacheTTL    time.Duration
	timeout     time.Duration
	appType     string
	urls        urlRule
	stepFn      func(ctx context.Context, step string) (context.Context, func(error))

	nonces nonceCache // DPoP nonces of authorization servers, by origin
	keys   keyCache   // parsed proof keys, by thumbprint

	mu    sync.Mutex
	cache map[string]cached // by storeKey

	evMu     sync.Mutex
	evidence map[string]evidence // by storeKey; see RecordChallenge
}

// cached is a credential as this Client last read or wrote it, and when.
type cached struct {
	rec *record // never modified once cached
	at  time.Time
}

// New returns a Client. It returns a *refusal.Error of Class Config,
// Reason "oauth_options_invalid", when Client, Store or Locker is nil, or
// ApplicationType is not one of the Application... constants or "".
func New(opts Options) (*Client, error) {
	if opts.Client == nil || opts.Store == nil || opts.Locker == nil ||
		(opts.ApplicationType != "" && opts.ApplicationType != ApplicationNative && opts.ApplicationType != ApplicationWeb) {
		return nil, refusal.New(refusal.Config, "oauth_options_invalid", "")
	}
	c := &Client{
		client:      opts.Client,
		store:       opts.Store,
		locker:      opts.Locker,
		now:         opts.Now,
		lockTimeout: opts.LockTimeout,
		maxBody:     opts.MaxResponseBytes,
		clientName:  opts.ClientName,
		cacheTTL:    opts.CacheTTL,
		timeout:     opts.RequestTimeout,
		appType:     opts.ApplicationType,
		urls:        urlRule{loopbackHTTP: opts.AllowLoopbackHTTP},
		stepFn:      opts.Step,
		cache:       map[string]cached{},
		evidence:    map[string]evidence{},
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.lockTimeout <= 0 {
		c.lockTimeout = DefaultLockTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	if c.clientName == "" {
		c.clientName = DefaultClientName
	}
	if c.cacheTTL == 0 {
		c.cacheTTL = DefaultCacheTTL
	}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	if c.appType == "" {
		c.appType = ApplicationNative
	}
	return c, nil
}
