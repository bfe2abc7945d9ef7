package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
)

// Reasons of a workload identity sign-in (MCP SEP-1933).
const (
	// ReasonWorkloadIdentityInvalid (Config): a WorkloadIdentity names
	// neither a token file nor a command, or both, or an empty command.
	ReasonWorkloadIdentityInvalid = "workload_identity_invalid"
	// ReasonWorkloadTokenUnavailable (Config): the token file cannot be
	// read (or is larger than a JWT), or the command failed, timed out or
	// printed nothing. Neither the path, the argv nor anything the command
	// printed is reported.
	ReasonWorkloadTokenUnavailable = "workload_token_unavailable"
	// ReasonWorkloadTokenInvalid (Config): what the file or command gave
	// is not a signed JWT (three base64url parts, a JSON object of claims,
	// an algorithm other than "none") with an issuer, an audience and an
	// expiry.
	ReasonWorkloadTokenInvalid = "workload_token_invalid"
	// ReasonWorkloadTokenExpired (AuthRequired): the JWT has expired (or
	// is not valid yet): it is not sent. The platform renews it (a
	// Kubernetes projected token, a CI job's token); sign in again with a
	// fresh one.
	ReasonWorkloadTokenExpired = "workload_token_expired"
	// ReasonWorkloadAudienceMismatch (Refused): the JWT's audience names
	// neither the authorization server's issuer nor its token endpoint:
	// it was issued for another party and is never sent to this one.
	ReasonWorkloadAudienceMismatch = "workload_audience_mismatch"
	// ReasonWorkloadIssuerMismatch (Refused): the JWT's issuer is not the
	// one WorkloadIdentity.Issuer names: it is not sent.
	ReasonWorkloadIssuerMismatch = "workload_issuer_mismatch"
)

// Bounds of a workload identity sign-in.
const (
	// maxWorkloadToken bounds what a token file or command may give.
	maxWorkloadToken = 16 << 10
	// WorkloadCommandTimeout bounds a WorkloadIdentity.Command's run.
	WorkloadCommandTimeout = 30 * time.Second
	// workloadSkew is how long before its expiry a JWT counts as expired
	// (it must still be valid when the authorization server reads it).
	workloadSkew = 10 * time.Second
)

// WorkloadIdentity is where a workload's identity comes from for a sign-in
// without a person (MCP SEP-1933): a JWT its platform issues it (a
// Kubernetes projected service account token, a CI job's OIDC token, a
// cloud metadata server's identity token), presented to the MCP server's
// authorization server with the JWT-bearer grant (RFC 7523 §2.1). Exactly
// one of TokenFile and Command is set. It comes from the host (a flag, the
// host's own configuration), never from a definition.
type WorkloadIdentity struct {
	// TokenFile is a file holding the JWT. It is read at sign-in and read
	// again whenever the access token is renewed (the platform rotates the
	// file); the path, not the JWT, is kept with the credential.
	TokenFile string
	// Command is the argv of a program that prints the JWT on its
	// standard output, run without a shell, with the host process's
	// environment, within WorkloadCommandTimeout; its standard error is
	// discarded. It is run once, at sign-in, and never stored: an access
	// token from it that expires without a refresh token needs a new
	// sign-in.
	Command []string
	// ClientID is the client id sent with the grant; "" means
	// Server.ClientID, and none is sent when that is "" too.
	ClientID string
	// Issuer, when set, is the iss the JWT must name exactly; "" accepts
	// any issuer (the JWT must still name one).
	Issuer string
}

// jwtClaims is the part of a JWT's claims this package reads.
type jwtClaims struct {
	Issuer    string          `json:"iss"`
	Audience  json.RawMessage `json:"aud"`
	Expiry    *float64        `json:"exp"`
	NotBefore *float64        `json:"nbf"`
}

// parseJWT reads the header and claims of a compact JWS JWT without
// verifying its signature (it is the authorization server's to verify):
// three non-empty base64url parts, a header that is a JSON object whose
// alg is a string other than "none", claims that are a JSON object. It
// returns the claims and the audiences (aud as a string or an array of
// strings). ok is false otherwise. It never panics.
func parseJWT(raw string) (c jwtClaims, aud []string, ok bool) {
	if len(raw) > maxWorkloadToken {
		return jwtClaims{}, nil, false
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return jwtClaims{}, nil, false
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return jwtClaims{}, nil, false
	}
	var hdr struct {
		Alg *string `json:"alg"`
	}
	if !jsonObject(hb) || json.Unmarshal(hb, &hdr) != nil || hdr.Alg == nil || *hdr.Alg == "" || strings.EqualFold(*hdr.Alg, "none") {
		return jwtClaims{}, nil, false
	}
	if _, err := base64.RawURLEncoding.DecodeString(parts[2]); err != nil {
		return jwtClaims{}, nil, false
	}
	cb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !jsonObject(cb) || json.Unmarshal(cb, &c) != nil {
		return jwtClaims{}, nil, false
	}
	switch a := bytes.TrimSpace(c.Audience); {
	case len(a) == 0 || string(a) == "null":
	case a[0] == '"':
		var s string
		if json.Unmarshal(a, &s) != nil {
			return jwtClaims{}, nil, false
		}
		aud = []string{s}
	default:
		if json.Unmarshal(a, &aud) != nil {
			return jwtClaims{}, nil, false
		}
	}
	return c, aud, true
}

// jsonObject reports whether b, white space trimmed, starts as a JSON
// object.
func jsonObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// checkWorkloadJWT checks raw, a workload's JWT, before it is sent to the
// token endpoint tokenURL of the authorization server issuer, at now: a
// JWT (parseJWT) with an issuer (issuerWant's exactly when not ""), an
// audience naming issuer or tokenURL (a trailing "/" ignored), and an
// expiry more than workloadSkew ahead (and no nbf after now+workloadSkew).
// Errors are the Reason... of this file, naming server.
func checkWorkloadJWT(raw, issuer, tokenURL, issuerWant string, now time.Time, server string) error {
	c, aud, ok := parseJWT(raw)
	if !ok || c.Issuer == "" || len(aud) == 0 || c.Expiry == nil {
		return refuse(refusal.Config, ReasonWorkloadTokenInvalid, server, "")
	}
	if issuerWant != "" && c.Issuer != issuerWant {
		return refuse(refusal.Refused, ReasonWorkloadIssuerMismatch, server, "")
	}
	match := false
	for _, a := range aud {
		a = strings.TrimSuffix(a, "/")
		if a != "" && (a == strings.TrimSuffix(issuer, "/") || a == strings.TrimSuffix(tokenURL, "/")) {
			match = true
		}
	}
	if !match {
		return refuse(refusal.Refused, ReasonWorkloadAudienceMismatch, server, "")
	}
	unix := float64(now.Unix())
	if *c.Expiry <= unix+workloadSkew.Seconds() || (c.NotBefore != nil && *c.NotBefore > unix+workloadSkew.Seconds()) {
		return refuse(refusal.AuthRequired, ReasonWorkloadTokenExpired, server, "")
	}
	return nil
}

// workloadJWT returns the JWT w's source gives: the token file's content
// or the command's standard output, white space around it removed.
// Errors: Config ReasonWorkloadIdentityInvalid, Config
// ReasonWorkloadTokenUnavailable; the ctx refusal when ctx ends while the
// command runs.
func workloadJWT(ctx context.Context, w WorkloadIdentity, server string) (string, error) {
	switch {
	case (w.TokenFile == "") == (len(w.Command) == 0), len(w.Command) > 0 && w.Command[0] == "":
		return "", refuse(refusal.Config, ReasonWorkloadIdentityInvalid, server, "")
	case w.TokenFile != "":
		return readTokenFile(w.TokenFile, server)
	}
	cctx, cancel := context.WithTimeout(ctx, WorkloadCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, w.Command[0], w.Command[1:]...)
	cmd.Stdin = nil
	cmd.Stderr = nil
	var out limitedBuffer
	out.max = maxWorkloadToken
	cmd.Stdout = &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", ctxRefusal(ctx.Err(), server, "")
	}
	t := strings.TrimSpace(out.b.String())
	if err != nil || out.over || t == "" {
		return "", refuse(refusal.Config, ReasonWorkloadTokenUnavailable, server, "")
	}
	return t, nil
}

// readTokenFile reads a token file of at most maxWorkloadToken bytes, white
// space around its content removed. Errors: Config
// ReasonWorkloadTokenUnavailable.
func readTokenFile(path, server string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", refuse(refusal.Config, ReasonWorkloadTokenUnavailable, server, "")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWorkloadToken+1))
	t := strings.TrimSpace(string(b))
	if err != nil || len(b) > maxWorkloadToken || t == "" {
		return "", refuse(refusal.Config, ReasonWorkloadTokenUnavailable, server, "")
	}
	return t, nil
}

// limitedBuffer is an io.Writer keeping at most max bytes; over is set
// when more came (they are dropped).
type limitedBuffer struct {
	b    bytes.Buffer
	max  int
	over bool
}

// Write implements io.Writer; it never fails, so the command is not killed
// by a broken pipe before its exit status is known.
func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); len(p) > room {
		l.over = true
		if room > 0 {
			l.b.Write(p[:room])
		}
		return len(p), nil
	}
	return l.b.Write(p)
}

// SignInWorkloadIdentity signs in to s as a workload, with no person and no
// browser (MCP SEP-1933): it reads the JWT w names (before any request, so
// an unreadable file or a token that is not a JWT fails at once), checks
// it before sending it (checkWorkloadJWT: an issuer, w.Issuer's when set;
// an audience naming the authorization server discovery finds, by its
// issuer or token endpoint; not expired), then presents it at the token endpoint
// with the JWT-bearer grant (RFC 7523 §2.1: grant_type
// urn:ietf:params:oauth:grant-type:jwt-bearer, assertion, the RFC 8707
// resource and the scope of a headless sign-in), as the public client
// w.ClientID (else s.ClientID, else no client id), with a DPoP proof when
// the authorization server advertises DPoP. The tokens are stored as a
// sign-in's; the JWT never is. When the access token expires without a
// refresh token it is renewed by the same grant with the token file read
// (and checked) again; a command's is not run again (sign in again).
//
// A refused grant is returned as it is and never retried, nor is another
// grant tried. Errors: those of workloadJWT and checkWorkloadJWT (the
// Reason... of WorkloadIdentity, nothing sent); the errors of discovery (a
// *DiscoveryError); those of Client.tokenRequest (AuthRefused
// ReasonTokenRefused for invalid_grant, ReasonScopeRefused,
// ReasonClientUnauthorized, ...), fillToken and the store. Safe for
// concurrent use.
func (c *Client) SignInWorkloadIdentity(ctx context.Context, s Server, w WorkloadIdentity) (err error) {
	ctx, end := c.step(ctx, StepSignIn)
	defer func() { end(err) }()
	assertion, err := workloadJWT(ctx, w, s.ID)
	if err != nil {
		return err
	}
	if _, _, ok := parseJWT(assertion); !ok {
		return refuse(refusal.Config, ReasonWorkloadTokenInvalid, s.ID, "")
	}
	ep, err := c.discover(ctx, s, "")
	if err != nil {
		return err
	}
	if err := checkWorkloadJWT(assertion, ep.issuer, ep.token.String(), w.Issuer, c.now(), s.ID); err != nil {
		return err
	}
	if err := c.migrate(ctx, s, ep); err != nil {
		return err
	}
	key, err := c.signInKey(s, ep)
	if err != nil {
		return err
	}
	clientID := w.ClientID
	if clientID == "" {
		clientID = s.ClientID
	}
	scope := c.headlessScope(s, ep)
	params := url.Values{"grant_type": {grantJWTBearer}, "assertion": {assertion}, "resource": {ep.indicator}}
	if scope != "" {
		params.Set("scope", scope)
	}
	tok, _, err := c.tokenRequest(ctx, s.ID, ep.token, clientAuth{method: AuthNone, id: clientID}, ep.issuer, params, key)
	if err != nil {
		return err
	}
	rec := c.newCredential(ctx, s, ep, clientID)
	rec.Requested = scopeList(scope)
	rec.Grant = grantJWTBearer
	rec.Scope = scope
	rec.WorkloadFile, rec.WorkloadIssuer = w.TokenFile, w.Issuer
	if err := fillToken(tok, rec, c.now(), s.ID, c.urls.origin(ep.token.String()), key); err != nil {
		return err
	}
	return c.saveLocked(ctx, rec, key)
}

// readWorkloadFile reads and checks again the JWT of rec's token file, for
// its renewal at tokenURL. Errors as SignInWorkloadIdentity's for the JWT;
// Class AuthRequired ReasonSignInRequired when rec names no token file.
func (c *Client) readWorkloadFile(rec *record, tokenURL *url.URL) (string, error) {
	if rec.WorkloadFile == "" {
		return "", refuse(refusal.AuthRequired, ReasonSignInRequired, rec.Server, "")
	}
	jwt, err := readTokenFile(rec.WorkloadFile, rec.Server)
	if err != nil {
		return "", err
	}
	if err := checkWorkloadJWT(jwt, rec.Issuer, tokenURL.String(), rec.WorkloadIssuer, c.now(), rec.Server); err != nil {
		return "", err
	}
	return jwt, nil
}
