package oauth

import (
	"context"
	"crypto/subtle"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of sign-in failures that errors.go does not name.
const (
	// ReasonCallbackPortInvalid (Config): Server.CallbackPort is not a TCP
	// port (0 to 65535); retrying cannot help, so it is not
	// ReasonCallbackUnavailable.
	ReasonCallbackPortInvalid = "callback_port_invalid"
	// ReasonSignInOpenFailed (Transient): the open function given to
	// SignInWith failed with an error that is not a *refusal.Error (its
	// text is never passed on).
	ReasonSignInOpenFailed = "sign_in_open_failed"
)

const (
	// loopbackHost is the only address the redirect listener binds (RFC
	// 8252 §7.3): never 0.0.0.0, never a host name a resolver could answer.
	loopbackHost = "127.0.0.1"
	// callbackPath is the path of the redirect URI.
	callbackPath = "/callback"
	// shutdownTimeout bounds Close's graceful shutdown of the listener
	// before its connections are closed outright.
	shutdownTimeout = 2 * time.Second
)

// Fixed pages of the loopback listener: nothing from the request, the
// server or its metadata is ever written back to the browser.
const (
	pageSignedIn = "Signed in. You may close this window.\n"
	pageFailed   = "Sign-in failed. You may close this window.\n"
	pageNotFound = "Not found.\n"
)

// SignIn is one sign-in attempt, made by Client.BeginSignIn: its PKCE
// verifier, state, client id, loopback redirect listener and authorization
// URL. Exactly one redirect is accepted, from the loopback listener or
// Complete, whichever comes first; Close must be called to release the
// listener. A SignIn is safe for concurrent use.
//
// A redirect consumes the attempt once it is this sign-in's (for Complete:
// on its redirect URI) and carries its state: a redirect with a missing or
// wrong state, or a malformed query, is refused without consuming anything,
// so a page that does not know the state cannot burn the attempt. Every
// check after the state (iss, error, code) and the code exchange is
// terminal: its outcome is the attempt's outcome.
type SignIn struct {
	c           *Client
	s           Server
	ep          *endpoints
	pk          pkce
	state       string
	clientID    string
	auth        clientAuth    // how the code exchange authenticates
	save        *clientRecord // stored with the tokens (a pre-registered client's secret)
	registered  bool          // auth is a stored dynamic registration
	key         *proofKey     // the DPoP proof key the tokens are bound to; nil for Bearer
	host        string        // "127.0.0.1:PORT", the redirect URI's host
	redirectURI string
	authURL     string

	srv       *http.Server
	serveDone chan struct{} // closed when srv.Serve returned
	// life is the context of exchanges of loopback redirects; Close
	// cancels it.
	life      context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once

	mu       sync.Mutex
	used     bool           // a redirect with this state was accepted
	closed   bool           // Close was called
	handlers sync.WaitGroup // loopback handlers past the closed check
	closedCh chan struct{}  // closed by Close
	done     chan struct{}  // closed once the accepted redirect's outcome is known
	result   error          // that outcome; written before done is closed

	end     func(error) // the StepSignIn's end
	endOnce sync.Once
}

// endStep ends the sign-in's StepSignIn with err, once: later calls do
// nothing.
func (p *SignIn) endStep(err error) {
	p.endOnce.Do(func() {
		if p.end != nil {
			p.end(err)
		}
	})
}

// BeginSignIn is BeginSignInWithOptions with no options: a pre-registered
// client (s.ClientID) is public unless a sign-in before stored its secret.
func (c *Client) BeginSignIn(ctx context.Context, s Server) (*SignIn, error) {
	return c.BeginSignInWithOptions(ctx, s, SignInOptions{})
}

// begin returns the SignIn of BeginSignInWithOptions on the open listener
// ln with the chosen client and key (nil for Bearer tokens), and starts
// serving ln; end ends its StepSignIn. It cannot fail.
func (c *Client) begin(s Server, ep *endpoints, ln net.Listener, ch chosenClient, key *proofKey, end func(error)) *SignIn {
	host := net.JoinHostPort(loopbackHost, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	redirectURI := "http://" + host + callbackPath
	p := &SignIn{
		c: c, s: s, ep: ep, pk: newPKCE(), state: randomString(), clientID: ch.auth.id,
		auth: ch.auth, save: ch.save, registered: ch.registered, key: key,
		host: host, redirectURI: redirectURI, end: end,
		serveDone: make(chan struct{}), closedCh: make(chan struct{}), done: make(chan struct{}),
	}
	p.authURL = p.authorizationURL()
	p.life, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveCallback),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return p.life },
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(p.serveDone)
		_ = p.srv.Serve(ln) // closes ln when it returns
	}()
	return p
}

// authorizationURL returns the authorization endpoint with the parameters
// of this sign-in added to the query it already had: response_type=code,
// client_id, redirect_uri, state, code_challenge, code_challenge_method=S256,
// resource (RFC 8707: the server's canonical URL, wherever its metadata
// was found) and scope (the endpoints' request, see signInScopes,
// space-separated; omitted when empty). It is called once, as the sign-in
// begins, and notes those scopes as requested (which takes in a pending
// step-up).
func (p *SignIn) authorizationURL() string {
	u := *p.ep.authorization
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", p.clientID)
	q.Set("redirect_uri", p.redirectURI)
	q.Set("state", p.state)
	q.Set("code_challenge", p.pk.challenge)
	q.Set("code_challenge_method", pkceMethod)
	q.Set("resource", p.ep.indicator)
	p.c.began(storeKey(p.s.ID, p.ep.resource), p.ep.request)
	if len(p.ep.request) > 0 {
		q.Set("scope", strings.Join(p.ep.request, " "))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// URL returns the authorization URL to open in the user's browser. It
// carries the state and the client id: show it only to the user.
func (p *SignIn) URL() string { return p.authURL }

// RedirectURI returns the loopback redirect URI,
// http://127.0.0.1:PORT/callback.
func (p *SignIn) RedirectURI() string { return p.redirectURI }

// Wait waits until a redirect was accepted (by the loopback listener or
// Complete) and returns its outcome: nil once the tokens are stored, else
// the terminal refusal (ReasonSignInIssuerMismatch, ReasonSignInDenied,
// ReasonSignInRedirectInvalid for a redirect without a code, or an exchange
// failure such as ReasonTokenRefused). A loopback redirect refused without
// consuming the attempt (wrong state, malformed query, wrong host or path)
// is answered to the browser only, and Wait keeps waiting, so a stray or
// hostile request cannot end a sign-in.
//
// When ctx ends first it returns Transient "canceled" or
// "deadline_exceeded"; the listener stays open (and a redirect may still be
// accepted) until Close. Called after Close, or when Close ends the wait,
// it returns Config ReasonSignInUsed. Once an outcome is known every Wait
// before Close returns it. Safe for concurrent use.
func (p *SignIn) Wait(ctx context.Context) error {
	if err := p.closedErr(); err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.outcome()
	default:
	}
	select {
	case <-p.done:
		return p.outcome()
	case <-p.closedCh:
		return refuse(refusal.Config, ReasonSignInUsed, p.s.ID, "")
	case <-ctx.Done():
		return ctxRefusal(ctx.Err(), p.s.ID, "")
	}
}

// Complete accepts redirect, the URL the browser was redirected to as the
// user pasted it (surrounding white space ignored), exchanges its code and
// stores the credential. ctx bounds the exchange; if it ends during the
// exchange the attempt stays consumed.
//
// Errors, checked in this order: Config ReasonSignInUsed when the sign-in
// already accepted a redirect or was closed; Config
// ReasonSignInRedirectInvalid when redirect is not exactly this sign-in's
// redirect URI (scheme http, host 127.0.0.1:PORT, path /callback, no
// userinfo or fragment) or its query is malformed; Refused
// ReasonSignInStateMismatch for a missing, repeated or wrong state — none
// of these consume the attempt — then the terminal ones of Wait. Safe for
// concurrent use: of concurrent calls with this state, one is accepted and
// the others get ReasonSignInUsed.
func (p *SignIn) Complete(ctx context.Context, redirect string) error {
	if err := p.usedErr(); err != nil {
		return err
	}
	rawQuery, ok := pastedQuery(redirect, p.host)
	if !ok {
		return refuse(refusal.Config, ReasonSignInRedirectInvalid, p.s.ID, "")
	}
	return p.accept(ctx, rawQuery)
}

// Close shuts the loopback listener down, cancels an exchange a loopback
// redirect started, and returns when no goroutine of this SignIn is left.
// Later Wait and Complete calls return ReasonSignInUsed. It is idempotent,
// safe for concurrent use, and always returns nil.
func (p *SignIn) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.closedCh)
		p.mu.Unlock()
		p.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if p.srv.Shutdown(ctx) != nil {
			_ = p.srv.Close()
		}
		cancel()
		<-p.serveDone
		p.handlers.Wait()
		// Closed before a redirect's outcome: the sign-in was abandoned.
		p.endStep(refuse(refusal.Transient, "canceled", p.s.ID, ""))
	})
	return nil
}

// SignInWith runs a whole sign-in for s: BeginSignIn, open(URL) (the host
// opens a browser, or shows the URL), Wait, Close. Errors: Config
// "oauth_options_invalid" when open is nil; those of BeginSignIn and Wait;
// open's error when it is a *refusal.Error (its server filled in), else
// Transient ReasonSignInOpenFailed. A discovery failure is a
// *DiscoveryError (ReportOf gives its Report). Safe for concurrent use.
func (c *Client) SignInWith(ctx context.Context, s Server, open func(authURL string) error) error {
	return c.SignInWithOptions(ctx, s, SignInOptions{}, open)
}

// serveCallback is the loopback listener's only handler. It accepts GET
// /callback with Host 127.0.0.1:PORT (404 or 405 otherwise, which consume
// nothing) and answers 200 with pageSignedIn when the redirect was accepted
// and exchanged, 400 with pageFailed otherwise: never anything taken from
// the request. The exchange runs under p.life, so Close cancels it.
func (p *SignIn) serveCallback(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.URL.EscapedPath() != callbackPath || r.Host != p.host {
		reply(w, http.StatusNotFound, pageNotFound)
		return
	}
	if r.Method != http.MethodGet {
		h.Set("Allow", http.MethodGet)
		reply(w, http.StatusMethodNotAllowed, pageFailed)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		reply(w, http.StatusBadRequest, pageFailed)
		return
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()
	if p.accept(p.life, r.URL.RawQuery) != nil {
		reply(w, http.StatusBadRequest, pageFailed)
		return
	}
	reply(w, http.StatusOK, pageSignedIn)
}

// reply writes status and the fixed page body.
func reply(w http.ResponseWriter, status int, body string) {
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// pastedQuery returns the raw query of raw (white space around it ignored)
// when raw is exactly the redirect URI on host: scheme http, host equal to
// host byte for byte, escaped path exactly /callback, no opaque part,
// userinfo or fragment. ok is false otherwise. It never panics.
func pastedQuery(raw, host string) (rawQuery string, ok bool) {
	raw = strings.TrimSpace(raw)
	if strings.Contains(raw, "#") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Opaque != "" || u.User != nil || u.Host != host ||
		u.EscapedPath() != callbackPath || u.Fragment != "" {
		return "", false
	}
	return u.RawQuery, true
}

// accept checks the query of a redirect to this sign-in and, when it
// carries this sign-in's state, consumes the attempt and finishes it (see
// finish). Errors: Config ReasonSignInUsed when the attempt is consumed or
// closed; Config ReasonSignInRedirectInvalid for a malformed query and
// Refused ReasonSignInStateMismatch for a missing, repeated or wrong state
// (neither consumes the attempt); else finish's outcome, which is also
// recorded for Wait.
func (p *SignIn) accept(ctx context.Context, rawQuery string) error {
	if err := p.usedErr(); err != nil {
		return err
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return refuse(refusal.Config, ReasonSignInRedirectInvalid, p.s.ID, "")
	}
	state, ok := single(q, "state")
	if !ok || subtle.ConstantTimeCompare([]byte(state), []byte(p.state)) != 1 {
		return refuse(refusal.Refused, ReasonSignInStateMismatch, p.s.ID, "")
	}
	p.mu.Lock()
	if p.used || p.closed {
		p.mu.Unlock()
		return refuse(refusal.Config, ReasonSignInUsed, p.s.ID, "")
	}
	p.used = true
	p.mu.Unlock()

	err = p.finish(ctx, q)

	p.mu.Lock()
	p.result = err
	p.mu.Unlock()
	p.endStep(err)
	close(p.done)
	return err
}

// finish runs the checks after the state on a redirect's query q and
// exchanges its code. Errors: Refused ReasonSignInIssuerMismatch when iss
// is present but not exactly the issuer, repeated, or absent although the
// issuer promised it (RFC 9207); AuthRefused ReasonSignInDenied when the
// redirect carries error (its description is never read); Config
// ReasonSignInRedirectInvalid when it carries no single non-empty code;
// else those of exchange.
func (p *SignIn) finish(ctx context.Context, q url.Values) error {
	if vals, present := q["iss"]; present {
		if len(vals) != 1 || vals[0] != p.ep.issuer {
			return refuse(refusal.Refused, ReasonSignInIssuerMismatch, p.s.ID, "")
		}
	} else if p.ep.issParameter {
		return refuse(refusal.Refused, ReasonSignInIssuerMismatch, p.s.ID, "")
	}
	if _, present := q["error"]; present {
		return refuse(refusal.AuthRefused, ReasonSignInDenied, p.s.ID, "")
	}
	code, ok := single(q, "code")
	if !ok || code == "" {
		return refuse(refusal.Config, ReasonSignInRedirectInvalid, p.s.ID, "")
	}
	return p.exchange(ctx, code)
}

// exchange trades code for tokens at the token endpoint (grant
// authorization_code with redirect_uri, code_verifier and the RFC 8707
// resource, the client authenticated as p.auth says, with a DPoP proof of
// p.key when there is one) and stores them as a new credential (with p.key
// beside it), replacing an older one only now, after the client
// registration p.save when there is one. A stored dynamic registration the
// token endpoint refuses (invalid_client) is deleted. Errors name the token
// endpoint's origin: those of Client.tokenRequest (AuthRefused ReasonTokenRefused or
// ReasonClientAuthRefused for a refused code or client, ...), fillToken,
// Client.saveClient and Client.saveLocked.
func (p *SignIn) exchange(ctx context.Context, code string) error {
	id := p.s.ID
	origin := p.c.urls.origin(p.ep.token.String())
	tok, _, err := p.c.tokenRequest(ctx, id, p.ep.token, p.auth, p.ep.issuer, url.Values{
		"grant_type":    {grantAuthorizationCode},
		"code":          {code},
		"redirect_uri":  {p.redirectURI},
		"code_verifier": {p.pk.verifier},
		"resource":      {p.ep.indicator},
	}, p.key)
	if err != nil {
		if p.registered && refusal.ReasonOf(err) == ReasonClientAuthRefused {
			// The server forgot the client: the next sign-in registers anew.
			_ = p.c.store.Delete(ctx, clientKey(p.s.ID, p.ep.resource, p.ep.issuer))
		}
		return err
	}
	rec := p.c.newCredential(ctx, p.s, p.ep, p.clientID)
	if err := fillToken(tok, rec, p.c.now(), id, origin, p.key); err != nil {
		return err
	}
	if p.save != nil {
		if err := p.c.saveClient(ctx, p.save); err != nil {
			return err
		}
	}
	return p.c.saveLocked(ctx, rec, p.key)
}

// single returns the only value of name in q; ok is false when name is
// absent or repeated (RFC 6749 §3.1: parameters must not repeat).
func single(q url.Values, name string) (string, bool) {
	vals := q[name]
	if len(vals) != 1 {
		return "", false
	}
	return vals[0], true
}

// usedErr returns Config ReasonSignInUsed when the attempt was consumed or
// closed, else nil.
func (p *SignIn) usedErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used || p.closed {
		return refuse(refusal.Config, ReasonSignInUsed, p.s.ID, "")
	}
	return nil
}

// closedErr returns Config ReasonSignInUsed when Close was called, else nil.
func (p *SignIn) closedErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return refuse(refusal.Config, ReasonSignInUsed, p.s.ID, "")
	}
	return nil
}

// outcome returns the accepted redirect's outcome; call it only after done
// is closed.
func (p *SignIn) outcome() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.result
}
