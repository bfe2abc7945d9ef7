// Package login is "mcpward login NAME": sign in to an OAuth server.
package login

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/refusal"
)

// DefaultTimeout bounds how long login waits for the browser's redirect.
const DefaultTimeout = 10 * time.Minute

// Options are login's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server to sign in to.
	Name string
	// Timeout bounds the whole sign-in.
	Timeout time.Duration
	// ClientSecretStdin: the first line of stdin is the secret of the
	// definition's pre-registered client (or, with ClientCredentials, of
	// ClientID).
	ClientSecretStdin bool
	// CallbackPort, when not 0, is the loopback port of the redirect
	// listener (a client registered with a fixed redirect port).
	CallbackPort int
	// ClientCredentials signs in with no user and no browser: the OAuth
	// client credentials grant, as ClientID, authenticated with the secret
	// on stdin or the private key in PrivateKeyFile.
	ClientCredentials bool
	// ClientID is the client id of ClientCredentials; "" means the
	// definition's oauth.clientId.
	ClientID string
	// PrivateKeyFile is a PEM private key file (private_key_jwt).
	PrivateKeyFile string
	// WorkloadTokenFile signs in as a workload, with no user and no
	// browser (MCP workload identity federation): the JWT in this file
	// (a Kubernetes projected token, a CI job's OIDC token) is checked
	// and presented with the JWT-bearer grant, as ClientID when set. The
	// file is read again whenever the access token is renewed.
	WorkloadTokenFile string
	// WorkloadIssuer, when set, is the issuer the workload's JWT must
	// name.
	WorkloadIssuer string
	// EnterpriseManaged signs in with the user's ID token from the
	// enterprise identity provider (MCP Enterprise-Managed Authorization):
	// the token in IDTokenFile is exchanged at IdPTokenEndpoint, as
	// IdPClientID, for an identity assertion grant, presented at the
	// server's authorization server as ClientID with the secret on stdin
	// (or PrivateKeyFile).
	EnterpriseManaged bool
	IDTokenFile       string
	IdPTokenEndpoint  string
	IdPClientID       string
	// IdPClientSecretFile is a file holding the secret of IdPClientID at
	// the IdP; "" means a public client there.
	IdPClientSecretFile string
}

// NewCmdLogin returns the login command; runF, when not nil, replaces Run.
func NewCmdLogin(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Timeout: DefaultTimeout}
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Sign in to the OAuth server NAME",
		Long: `Sign in to the HTTP server NAME: one whose definition has "oauth", or one
that answered with a Bearer challenge (listed as oauth_sign_in_required by
tools and call; its definition needs no "oauth" key). mcpward prints
the URL to open in your browser, then waits (at most 10 minutes) for the
browser's redirect to 127.0.0.1, or for the redirect's address pasted on
stdin (when the browser runs on another machine).

mcpward discovers the authorization server from the server's own metadata and
refuses anything it cannot check: a resource or issuer that does not match,
an endpoint that is not https, no PKCE S256. It registers itself when the
definition names no clientId. The tokens are kept for that server name and
URL together (in the OS keychain with --profile desktop, else under the
state directory) and are refreshed when they expire; tools and call then
use them.

A pre-registered confidential client (the definition's oauth.clientId) takes
its secret on stdin with --client-secret-stdin (never as a flag's value or in
a definition); it is kept with the tokens, for refreshes. --callback-port N
listens for the redirect on 127.0.0.1:N, for a client registered with that
redirect port.

--client-credentials signs in with no user and no browser (a machine
client): the OAuth client credentials grant, as --client-id (default: the
definition's oauth.clientId), authenticated with the secret on stdin
(client_secret_basic or client_secret_post) or with --private-key-file PEM
(private_key_jwt). The access token is renewed the same way when it
expires.

--workload-identity-token-file FILE signs in as a workload, with no user
and no browser: the JWT in FILE (a Kubernetes projected service account
token, a CI job's OIDC token) must name an issuer (--workload-issuer's,
when given), name the server's authorization server as its audience and
not be expired; it is then presented with the JWT-bearer grant (as
--client-id, when given). The JWT is never stored; FILE is read again when
the access token is renewed.

--enterprise-managed signs in with your identity at your organization's
identity provider, without a browser: the ID token in --id-token-file is
exchanged at --idp-token-endpoint (as --idp-client-id, with the secret in
--idp-client-secret-file if that client has one) for a grant the server's
authorization server takes from --client-id, whose secret comes on stdin
(or --private-key-file).

Where the authorization server offers DPoP, the tokens are bound to a key
kept beside them: a stolen token is of no use without it.

When discovery fails, every step it took is printed with what to do
("mcpward doctor NAME" shows the same without signing in).

With --json: {"name", "state": "signed_in"}.`,
		Example: `  $ mcpward login notes
  $ mcpward --profile desktop login notes
  $ pass show notes/client-secret | mcpward login --client-secret-stdin notes
  $ mcpward login --callback-port 8976 notes
  $ mcpward login --client-credentials --client-id ci-bot --private-key-file bot.pem notes
  $ mcpward login --workload-identity-token-file /var/run/secrets/tokens/mcp notes
  $ pass show notes/xaa | mcpward login --enterprise-managed --client-id xaa-app \
      --idp-token-endpoint https://idp.example.com/oauth2/token --idp-client-id mcpward \
      --id-token-file id_token.jwt notes`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Name = f.Globals.JSON, args[0]
			if err := checkFlags(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.ClientSecretStdin, "client-secret-stdin", false, "read the client's secret from the first line of stdin")
	fl.IntVar(&opts.CallbackPort, "callback-port", 0, "loopback port of the redirect listener (default: the definition's, else any free port)")
	fl.BoolVar(&opts.ClientCredentials, "client-credentials", false, "sign in with no user: the client credentials grant (secret on stdin, or --private-key-file)")
	fl.StringVar(&opts.ClientID, "client-id", "", "client id of --client-credentials (default: the definition's oauth.clientId)")
	fl.StringVar(&opts.PrivateKeyFile, "private-key-file", "", "PEM private key of --client-credentials or --enterprise-managed (private_key_jwt)")
	fl.StringVar(&opts.WorkloadTokenFile, "workload-identity-token-file", "", "sign in as a workload: the JWT-bearer grant with the JWT in this file")
	fl.StringVar(&opts.WorkloadIssuer, "workload-issuer", "", "the issuer the workload's JWT must name (default: any)")
	fl.BoolVar(&opts.EnterpriseManaged, "enterprise-managed", false, "sign in with your ID token from your organization's identity provider")
	fl.StringVar(&opts.IDTokenFile, "id-token-file", "", "the ID token of --enterprise-managed")
	fl.StringVar(&opts.IdPTokenEndpoint, "idp-token-endpoint", "", "the identity provider's token endpoint (--enterprise-managed)")
	fl.StringVar(&opts.IdPClientID, "idp-client-id", "", "mcpward's client id at the identity provider (--enterprise-managed)")
	fl.StringVar(&opts.IdPClientSecretFile, "idp-client-secret-file", "", "a file holding the secret of --idp-client-id, if it has one")
	return cmd
}

// checkFlags refuses flag combinations that mean nothing.
func checkFlags(o *Options) error {
	workload := o.WorkloadTokenFile != ""
	grants := 0
	for _, on := range []bool{o.ClientCredentials, workload, o.EnterpriseManaged} {
		if on {
			grants++
		}
	}
	idp := o.IDTokenFile != "" || o.IdPTokenEndpoint != "" || o.IdPClientID != "" || o.IdPClientSecretFile != ""
	switch {
	case o.CallbackPort < 0 || o.CallbackPort > 65535:
		return cmdutil.FlagErrorf("--callback-port must be a TCP port (1-65535)")
	case grants > 1:
		return cmdutil.FlagErrorf("--client-credentials, --workload-identity-token-file and --enterprise-managed are three ways to sign in: choose one")
	case grants == 0 && (o.ClientID != "" || o.PrivateKeyFile != ""):
		return cmdutil.FlagErrorf("--client-id and --private-key-file go with --client-credentials, --workload-identity-token-file or --enterprise-managed")
	case grants == 1 && o.CallbackPort != 0:
		return cmdutil.FlagErrorf("--callback-port means nothing without a browser (there is no redirect)")
	case (o.ClientCredentials || o.EnterpriseManaged) && o.PrivateKeyFile != "" && o.ClientSecretStdin:
		return cmdutil.FlagErrorf("the client takes a secret on stdin or --private-key-file, not both")
	case workload && (o.PrivateKeyFile != "" || o.ClientSecretStdin):
		return cmdutil.FlagErrorf("--workload-identity-token-file takes no client secret or key: the workload's JWT is its credential")
	case o.WorkloadIssuer != "" && !workload:
		return cmdutil.FlagErrorf("--workload-issuer goes with --workload-identity-token-file")
	case idp && !o.EnterpriseManaged:
		return cmdutil.FlagErrorf("--id-token-file, --idp-token-endpoint, --idp-client-id and --idp-client-secret-file go with --enterprise-managed")
	case o.EnterpriseManaged && (o.IDTokenFile == "" || o.IdPTokenEndpoint == ""):
		return cmdutil.FlagErrorf("--enterprise-managed needs --id-token-file and --idp-token-endpoint")
	}
	return nil
}

// Run signs the user in to opts.Name: it prints the authorization URL on
// stderr, then takes whichever comes first: the browser's redirect on the
// loopback listener, or the redirect URL pasted on stdin. A pasted line
// that is not this sign-in's redirect ends the login with its refusal.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var in *bufio.Scanner
	if opts.IO.In != nil {
		in = bufio.NewScanner(opts.IO.In)
	}
	secret := ""
	if opts.ClientSecretStdin || ((opts.ClientCredentials || opts.EnterpriseManaged) && opts.PrivateKeyFile == "") {
		if secret, err = readSecret(in); err != nil {
			return err
		}
	}
	switch {
	case opts.ClientCredentials:
		return clientCredentials(ctx, parent, a, opts, secret)
	case opts.WorkloadTokenFile != "":
		return workloadIdentity(ctx, parent, a, opts)
	case opts.EnterpriseManaged:
		return enterpriseManaged(ctx, parent, a, opts, secret)
	}
	p, err := signin.BeginWithOptions(ctx, a.Host, a.LibrarySources(), opts.Name,
		oauth.SignInOptions{ClientSecret: secret, CallbackPort: opts.CallbackPort})
	if err != nil {
		if rep := oauth.ReportOf(err); rep != nil && !opts.JSON {
			writeReport(opts, rep, err)
		}
		if fix := Fix(opts.Name, err); fix != "" {
			return &cmdutil.NotedError{Err: err, Note: fix}
		}
		return err
	}
	defer p.Close()
	fmt.Fprintf(opts.IO.ErrOut, "To sign in to %s, open this URL in your browser:\n\n  %s\n\n"+
		"Waiting for the sign-in to finish (at most %s). If your browser runs on another machine,\n"+
		"paste here the address it was sent to (it starts with %s) and press Enter.\n",
		termsafe.Line(opts.Name), termsafe.Line(p.URL()), opts.Timeout, termsafe.Line(p.RedirectURI()))

	waited := make(chan error, 1)
	go func() { waited <- p.Wait(ctx) }()
	pasted := make(chan string, 1)
	if in != nil {
		// A read of stdin cannot be cancelled; the goroutine ends with
		// the process (or at EOF).
		go readPasted(in, pasted)
	}
	select {
	case err = <-waited:
	case line := <-pasted:
		err = p.Complete(ctx, line)
	}
	if err != nil {
		if parent.Err() != nil {
			return cmdutil.ErrCancelled
		}
		if fix := Fix(opts.Name, err); fix != "" {
			return &cmdutil.NotedError{Err: err, Note: fix}
		}
		return err
	}
	return Done(opts.IO, opts.JSON, opts.Name, oauth.SignedIn, "signed in to "+opts.Name)
}

// readPasted sends the first non-empty line of sc.
func readPasted(sc *bufio.Scanner, pasted chan<- string) {
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			pasted <- line
			return
		}
	}
}

// Done writes the outcome of login or logout.
func Done(io *iostreams.IOStreams, asJSON bool, name string, st oauth.State, line string) error {
	if asJSON {
		_ = jsonout.Write(io.Out, view.SignIn{Name: name, State: string(st)})
		return nil
	}
	fmt.Fprintln(io.Out, termsafe.Line(line))
	return nil
}

// Fix is the one line of why and what to do for login's refusal err of
// name ("" when there is nothing to add).
func Fix(name string, err error) string {
	n := termsafe.Line(name)
	switch refusal.ReasonOf(err) {
	case composition.ReasonNotOAuth:
		return "why: " + n + " is a stdio server, or an HTTP server whose headers come from a headersHelper, so there is nothing to sign in to with OAuth; to do: nothing (its environment or its helper carries its credentials)"
	case composition.ReasonNotUsable:
		return "why: mcpward signs in only to a server it would use; to do: see \"mcpward show " + n + "\" (approve it first if it awaits approval)"
	case composition.ReasonUnknownServer:
		return "why: no configuration file defines " + n + "; to do: check the name with \"mcpward list\""
	case oauth.ReasonClientSecretRequired:
		return "why: the authorization server takes no public client, and " + n + "'s client id is a confidential client's; to do: give its secret on stdin: mcpward login --client-secret-stdin " + n
	case oauth.ReasonClientCredentialsInvalid:
		return "why: the client credentials grant needs a client id and a secret or a key; to do: give --client-id (or oauth.clientId in the definition) and the secret on stdin or --private-key-file"
	case oauth.ReasonClientKeyInvalid:
		return "why: the private key cannot be used (not a PEM private key, or of a kind the server does not accept); to do: check --private-key-file"
	case oauth.ReasonClientAuthRefused, oauth.ReasonClientUnauthorized:
		return "why: the authorization server refused the client (its id, secret or key, or the grant); to do: check them with the server's operator"
	case oauth.ReasonClientAuthUnsupported:
		return "why: the authorization server supports no client authentication mcpward can do with what was given; to do: give a secret on stdin, or a private key with --private-key-file"
	case oauth.ReasonCallbackUnavailable:
		return "why: the redirect listener on 127.0.0.1 could not be opened (the port is taken?); to do: choose another with --callback-port, or free it"
	case oauth.ReasonRegistrationUnavailable:
		return "why: the authorization server offers no dynamic registration; to do: get a client id from its operator, set oauth.clientId in " + n + "'s definition, and give its secret (if any) with --client-secret-stdin"
	case oauth.ReasonSignInIssuerMismatch:
		return "why: the browser came back without the issuer the authorization server promised, or with another one (RFC 9207): the answer may come from another authorization server (a mix-up), so it is not used; to do: sign in again from a new browser tab; if it recurs, tell the server's operator (\"mcpward doctor " + n + "\" shows whether the server promises the issuer)"
	case oauth.ReasonDPoPDowngrade:
		return "why: the authorization server offers DPoP but issued a token not bound to the proof key, which anyone who copies it could use; nothing was stored; to do: tell the server's operator"
	case oauth.ReasonDPoPNonceRefused, oauth.ReasonDPoPProofRefused:
		return "why: the authorization server refused mcpward's DPoP proof or kept asking for a new nonce; to do: check this machine's clock, then tell the server's operator"
	case oauth.ReasonTokenMalformed:
		return "why: the authorization server issued a token no Authorization header can carry (a space, a line break, a control or non-ASCII character); nothing was stored; to do: tell the server's operator"
	case oauth.ReasonTokenTooLarge:
		return "why: the authorization server issued a token larger than an HTTP header (or the token store) takes; nothing was stored; to do: tell the server's operator (fewer scopes may help)"
	case oauth.ReasonWorkloadTokenUnavailable:
		return "why: the workload's token cannot be read (the file is missing, empty or too large); to do: check --workload-identity-token-file: the platform writes it (a Kubernetes projected volume, a CI job's token)"
	case oauth.ReasonWorkloadTokenInvalid:
		return "why: the workload's token is not a signed JWT with an issuer, an audience and an expiry; to do: check what --workload-identity-token-file holds"
	case oauth.ReasonWorkloadTokenExpired:
		return "why: the workload's JWT has expired, so it was not sent; to do: let the platform renew the file, then sign in again"
	case oauth.ReasonWorkloadAudienceMismatch:
		return "why: the workload's JWT was issued for another party (its audience is not the server's authorization server), so it was not sent; to do: have the platform issue the token for the authorization server \"mcpward doctor " + n + "\" names"
	case oauth.ReasonWorkloadIssuerMismatch:
		return "why: the workload's JWT names another issuer than --workload-issuer, so it was not sent; to do: check --workload-issuer and the token file"
	case oauth.ReasonCrossAppInvalid:
		return "why: --enterprise-managed needs an ID token and the identity provider's https token endpoint; to do: check --id-token-file and --idp-token-endpoint"
	case oauth.ReasonTokenExchangeRefused, oauth.ReasonTokenExchangeInvalid:
		return "why: the identity provider did not exchange the ID token for a grant to this server (expired, or issued for another client); to do: get a fresh ID token, and check --idp-client-id"
	}
	return ""
}
