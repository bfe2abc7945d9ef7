// Package oauth is mcpward's OAuth client for MCP servers (MCP
// authorization, protocol versions 2025-06-18, 2025-11-25 and 2026-07-28):
// strict discovery, sign-in with PKCE S256 on a loopback redirect (or a
// pasted one), headless sign-ins (client credentials, enterprise-managed
// authorization, workload identity), tokens kept through a
// ports.TokenStore and bound to a DPoP proof key where the authorization
// server offers it, refresh coordinated across processes through a
// ports.Locker, and sign-out. An *Authenticator made by
// Client.Authenticator is the ports.Authenticator of one server for the
// HTTP transport.
//
// The client is, in this order, a pre-registered one (Server.ClientID,
// its secret given at sign-in), a client id metadata document URL
// (Server.ClientMetadataURL) where the authorization server supports
// them, or one dynamically registered (RFC 7591). It authenticates at the
// token endpoint as the authorization server's metadata, or its
// registration, says: none, client_secret_basic, client_secret_post, or
// private_key_jwt for a headless client holding a key. A dynamic
// registration says its application_type (native for the loopback
// redirect, web when the host says so). A client registration is its own
// value in the token store, by issuer and server identity, never in a
// definition; it outlives a sign-out so the revocation can authenticate,
// and later sign-ins reuse it until its secret expires. Token requests go
// through golang.org/x/oauth2 (the RFC 8693 exchange of enterprise-managed
// authorization excepted), assertions are signed with go-jose.
//
// The sign-ins without a browser: SignInClientCredentials (a machine
// client), SignInEnterpriseManaged (MCP Enterprise-Managed Authorization:
// the user's ID token exchanged at the enterprise IdP for an ID-JAG, then
// the JWT-bearer grant) and SignInWorkloadIdentity (MCP workload identity
// federation: a JWT the workload's platform issues, checked and then
// presented with the JWT-bearer grant).
//
// Where the authorization server advertises ES256 for DPoP (RFC 9449),
// unless the host turns it off for the server (Server.DisableDPoP), a
// sign-in creates a P-256 proof key, kept in the token store beside the
// credential and never exported or reported; every token, refresh and
// resource request carries a fresh proof of it, the tokens go out with the
// DPoP scheme and never as Bearer tokens, an authorization server or MCP
// server that asks for a nonce gets the request once more with it, and an
// authorization server that answers a proof with a Bearer token is refused
// by name (ReasonDPoPDowngrade). Signing out deletes the credential, then
// the key.
//
// Every request has a deadline (Options.RequestTimeout), revocation
// included. A token response is checked before anything is stored: an
// access token an Authorization header cannot carry or one too large
// (MaxAccessTokenBytes) is refused by name, expires_in is read as a
// number or a string of digits. A token is refreshed at most once per
// lifetime: a short-lived one is used until it expires.
//
// It trusts only what it has checked:
//
//   - discovery follows no link it has not checked against the one before
//     it: the protected-resource metadata (RFC 9728) must name the resource
//     its location was built from (this server's canonical URL at the
//     path location and at a challenge's resource_metadata, its origin at
//     the root location), the authorization server's metadata (RFC 8414,
//     or OpenID Connect discovery) must name the issuer it was fetched for,
//     every endpoint is https, and code_challenge_methods_supported must
//     list S256. A missing link is refused by name, never guessed: no
//     endpoint at the MCP server's origin, no authorization server no
//     metadata names. The resource indicator sent is always this server's
//     canonical URL;
//   - a 401's Bearer challenge is evidence (RecordChallenge; the
//     Authenticator records those it sees): its resource_metadata is
//     followed first and its scope requested, by MCP's scope selection
//     order (then scopes_supported, else none; offline_access added when
//     the authorization server lists it). A 403 insufficient_scope naming
//     new scopes is a *StepUpError for the host to ask the user to sign in
//     again, never a silent sign-in; the step-up is saved beside the
//     credential, so the next sign-in in any process asks for the union of
//     the scopes requested, granted and named, and after maxStepUps in a
//     row the refusal is final;
//   - every discovery refusal names the check that failed; a Report
//     (Client.Discover, or ReportOf a BeginSignIn error) lists each step
//     with projected URLs and a hint a person can act on;
//   - https everywhere: Options.AllowLoopbackHTTP, for tests and the
//     conformance client only, admits http on localhost, 127.0.0.1 and
//     [::1] and nothing else;
//   - no request follows a redirect, and a POST (a code, a token, a
//     registration, a revocation) above all;
//   - a sign-in's redirect is accepted once, on its own redirect URI, with
//     its own state and, when the server sends or promises one, its issuer's
//     iss (RFC 9207);
//   - tokens are stored under the server id and its canonical URL together,
//     so a shadowing definition cannot use another's sign-in; a refresh goes
//     only to the token endpoint the tokens came from, runs once per
//     credential across processes, adopts a token another process rotated in,
//     keeps the old refresh token when none comes back, and a refused refresh
//     never clears a credential someone else rotated in meanwhile;
//   - signing out deletes the credential before asking the issuer to revoke
//     it.
//
// Every failure is a *refusal.Error (or wraps one: *DiscoveryError,
// *StepUpError) naming the server id and at most an origin: never a token,
// code, verifier, state, client id or secret, private key, assertion, URL
// path or query, or text from a response body (a token endpoint's OAuth
// error code only selects one of a fixed set of reasons), and never a proof
// key, a proof, a workload's JWT, an ID token or an ID-JAG.
package oauth
