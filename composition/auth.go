package composition

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// AuthKind says how the connections to one server authenticate. It is a
// word, safe to print; it never names a credential.
type AuthKind string

// The kinds of authentication a ServerEvaluation can carry.
const (
	// AuthNone: no authentication is decided: a stdio server (which has
	// none), or a server that did not get that far (see State).
	AuthNone AuthKind = ""
	// AuthStatic: an HTTP server reached with its definition's static
	// headers only (which may be none). Chosen only when the definition asks
	// for no other authentication.
	AuthStatic AuthKind = "static_headers"
	// AuthHeaderHelper: an HTTP server whose headers come from its
	// definition's headersHelper, a command line the host allows
	// (Config.HelperAllowList). The helper runs once per connection, and
	// once more after the server refuses its headers.
	AuthHeaderHelper AuthKind = "header_helper"
	// AuthOAuth: an HTTP server whose definition asks for oauth, in a
	// deployment with mcpward's OAuth client (Config.OAuth): connections
	// use the credential Host.SignIn stored, refreshed when it expires; a
	// server nobody signed in to fails to connect with Class AuthRequired,
	// Reason ReasonSignInRequired.
	AuthOAuth AuthKind = "oauth"
	// AuthHost: an HTTP server the host registered an Authenticator for
	// (Config.Authenticators). It is used as is, whatever the definition
	// asks for (oauth, a headersHelper): the host owns it.
	AuthHost AuthKind = "host_authenticator"
)

// Reasons of the authentication refusals. A ServerEvaluation refused for its
// authentication has StateRefused and one of these Reasons; dialling its
// target fails with the same Reason, before anything is connected.
const (
	// ReasonOAuthSignInUnavailable: the definition asks for oauth and the
	// host registered no Authenticator (no sign-in) for the server. Class
	// AuthRequired. The definition is never connected with its static
	// headers alone.
	ReasonOAuthSignInUnavailable = "oauth_sign_in_unavailable"
	// ReasonHeaderHelperNotAllowed: the definition's headersHelper is not,
	// element by element, one of Config.HelperAllowList. Class Refused (the
	// word of httptransport.ReasonHelperNotAllowed). A helper whose argv is
	// not an absolute program path is refused with
	// httptransport.ReasonHelperArgvInvalid (Class Config) instead.
	ReasonHeaderHelperNotAllowed = httptransport.ReasonHelperNotAllowed
	// ReasonAuthNotDecided: a Dialer was asked to connect an HTTP target
	// whose authentication was not decided by Host.Evaluate for that exact
	// server id and fingerprint (and no Authenticator is registered for
	// it). Class Config. Nothing is connected: a target does not say
	// whether its definition asked for oauth or a helper, so guessing
	// "static headers" could connect it without the authentication it
	// needs.
	ReasonAuthNotDecided = "auth_not_decided"
	// ReasonAuthenticatorNil: Config.Authenticators maps a server id to a
	// nil Authenticator. Class Config; the deployment is not built.
	ReasonAuthenticatorNil = "authenticator_nil"
)

// maxNeedsPerServer bounds how many fingerprints of one server id an
// Authentication remembers; the oldest is forgotten first (a target of a
// definition that has changed that often since is refused with
// ReasonAuthNotDecided until evaluated again).
const maxNeedsPerServer = 8

// Authentication decides how HTTP definitions authenticate, from the
// host's Config: the Authenticators it registered by server id and the
// header helper command lines it allows. Host.Evaluate asks it about every
// definition that reached it; a Dialer asks it for the Authenticator of
// each HTTP connection. Both must share one Authentication (the Wire
// injectors do).
//
// The decision, in order, for an HTTP definition of server id S:
//
//  1. an Authenticator registered for S is used as is (AuthHost);
//  2. otherwise a definition with oauth uses mcpward's OAuth client when
//     the deployment has one (AuthOAuth, Config.OAuth), and is refused
//     (ReasonOAuthSignInUnavailable) when it has none: no sign-in is
//     offered;
//  3. otherwise a headersHelper must be exactly one allowed command line
//     (else ReasonHeaderHelperNotAllowed, or the httptransport reason for
//     an invalid argv); it then authenticates every connection
//     (AuthHeaderHelper), a fresh httptransport.HeaderHelper per
//     connection;
//  4. otherwise the static headers alone (AuthStatic).
//
// An Authentication is safe for concurrent use.
type Authentication struct {
	allowed   [][]string
	helperEnv []string
	hosts     map[string]ports.Authenticator
	oauth     OAuthClient // nil: no sign-in offered

	mu sync.Mutex
	// needs remembers what each evaluated HTTP definition asked for, by
	// server id, newest last: a ports.Target does not carry oauth or the
	// helper argv, so the Dialer looks them up by id and fingerprint.
	needs map[string][]need
	// challenges are the latest 401/403 challenges of each connection
	// (challenges.go).
	challenges challengeLog
	// clientMetadataURL is Config.OAuth.ClientMetadataURL ("" without).
	clientMetadataURL string
}

// need is what one HTTP definition (one server id and fingerprint) asked
// for. The fingerprint covers oauth and the helper argv, so it names the
// need exactly.
type need struct {
	fingerprint string
	oauth       *definition.OAuth
	helper      []string
}

// newAuthentication returns the Authentication of cfg: its
// Authenticators, HelperAllowList and HelperEnv (all copied), and oc, the
// deployment's OAuth client (nil when it offers no sign-in). It returns a
// *refusal.Error of Class Config when an Authenticator is nil
// (ReasonAuthenticatorNil) or HelperEnv is malformed
// (httptransport.ReasonHelperEnvInvalid). It is a Wire provider.
func newAuthentication(cfg Config, oc OAuthClient) (*Authentication, error) {
	for id, a := range cfg.Authenticators {
		if a == nil {
			return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonAuthenticatorNil, Server: id, Detail: "a registered authenticator is nil"}
		}
	}
	a := &Authentication{
		allowed:   cloneArgvs(cfg.HelperAllowList),
		helperEnv: slices.Clone(cfg.HelperEnv),
		hosts:     maps.Clone(cfg.Authenticators),
		oauth:     oc,
		needs:     map[string][]need{},
	}
	if cfg.OAuth != nil {
		a.clientMetadataURL = cfg.OAuth.ClientMetadataURL
	}
	// Let httptransport validate HelperEnv once, here, with a probe argv
	// it allows: a bad environment is the host's error, not every
	// helper-using server's.
	probe := []string{"/mcpward-helper-env-probe"}
	if _, err := httptransport.NewHeaderHelper(probe, &httptransport.HelperOptions{Allowed: [][]string{probe}, Env: a.helperEnv}); err != nil {
		return nil, err
	}
	return a, nil
}

// decide decides how def (materialized, fingerprint fp) authenticates and
// remembers what it asked for, for the Dialer. It returns the kind and,
// when the definition must be refused by name, the refusal (a
// *refusal.Error with Server def.Name). A definition of a kind other than
// http gets AuthNone and nil.
func (a *Authentication) decide(def *definition.Definition, fp string) (AuthKind, *refusal.Error) {
	if def.Kind != definition.KindHTTP {
		return AuthNone, nil
	}
	n := need{fingerprint: fp, helper: slices.Clone(def.HeadersHelper)}
	if def.OAuth != nil {
		o := *def.OAuth
		o.Scopes = slices.Clone(o.Scopes)
		n.oauth = &o
	}
	a.remember(def.Name, n)
	if _, ok := a.hosts[def.Name]; ok {
		return AuthHost, nil
	}
	switch {
	case def.OAuth != nil && a.oauth != nil:
		return AuthOAuth, nil
	case def.OAuth != nil:
		return AuthNone, oauthRefusal(def.Name)
	case def.HeadersHelper != nil:
		if _, err := a.helper(def.Name, def.HeadersHelper); err != nil {
			return AuthNone, err
		}
		return AuthHeaderHelper, nil
	}
	return AuthStatic, nil
}

// authenticator returns the Authenticator one connection to t uses: the
// host's registered one, the OAuth client's for t (AuthOAuth), a fresh
// HeaderHelper, or nil for static headers. It refuses, with a
// *refusal.Error stamped with t.ServerID: a target whose need was never
// decided (ReasonAuthNotDecided), oauth in a deployment without an OAuth
// client (ReasonOAuthSignInUnavailable) or at a URL it refuses
// (oauth.ReasonURLInvalid: not https), a helper not allowed
// (ReasonHeaderHelperNotAllowed or the argv reason).
func (a *Authentication) authenticator(t ports.Target) (ports.Authenticator, error) {
	if h, ok := a.hosts[t.ServerID]; ok {
		return h, nil
	}
	n, ok := a.lookup(t.ServerID, t.Fingerprint)
	switch {
	case !ok:
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonAuthNotDecided, Server: t.ServerID,
			Detail: "authentication of this definition was not decided; evaluate it first"}
	case n.oauth != nil && a.oauth != nil:
		return a.oauth.Authenticator(t.ServerID, t.URL, n.oauth, a.refused(t))
	case n.oauth != nil:
		return nil, oauthRefusal(t.ServerID)
	case n.helper != nil:
		h, err := a.helper(t.ServerID, n.helper)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	return nil, nil
}

// helper builds the HeaderHelper for argv, or the refusal saying why
// there is none, stamped with server.
func (a *Authentication) helper(server string, argv []string) (*httptransport.HeaderHelper, *refusal.Error) {
	h, err := httptransport.NewHeaderHelper(argv, &httptransport.HelperOptions{
		Allowed:  a.allowed,
		Env:      a.helperEnv,
		ServerID: server,
	})
	if err != nil {
		var ref *refusal.Error
		if !errors.As(err, &ref) {
			ref = &refusal.Error{Class: refusal.Internal, Reason: httptransport.ReasonHelperArgvInvalid}
		}
		c := *ref
		c.Server = server
		return nil, &c
	}
	return h, nil
}

// remember records n for server id, replacing an entry of the same
// fingerprint and forgetting the oldest beyond maxNeedsPerServer.
func (a *Authentication) remember(id string, n need) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := slices.DeleteFunc(a.needs[id], func(o need) bool { return o.fingerprint == n.fingerprint })
	list = append(list, n)
	if len(list) > maxNeedsPerServer {
		list = slices.Delete(list, 0, len(list)-maxNeedsPerServer)
	}
	a.needs[id] = list
}

// lookup returns the need recorded for id and fingerprint fp.
func (a *Authentication) lookup(id, fp string) (need, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range a.needs[id] {
		if n.fingerprint == fp && fp != "" {
			return n, true
		}
	}
	return need{}, false
}

// oauthRefusal is the refusal of an oauth definition without sign-in.
func oauthRefusal(server string) *refusal.Error {
	return &refusal.Error{Class: refusal.AuthRequired, Reason: ReasonOAuthSignInUnavailable, Server: server,
		Detail: "the definition asks for oauth and the host offers no sign-in for it"}
}

// cloneArgvs deep-copies a list of command lines.
func cloneArgvs(in [][]string) [][]string {
	if in == nil {
		return nil
	}
	out := make([][]string, len(in))
	for i, argv := range in {
		out[i] = slices.Clone(argv)
	}
	return out
}
