package login

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/refusal"
)

// maxKeyFile bounds the private key file read.
const maxKeyFile = 64 << 10

// readSecret returns the first line of stdin, its surrounding spaces (and
// line end) removed: a client secret. An empty one, or no stdin, is a
// usage error naming the flag, never the value.
func readSecret(in *bufio.Scanner) (string, error) {
	if in != nil && in.Scan() {
		if s := strings.TrimSpace(in.Text()); s != "" {
			return s, nil
		}
	}
	return "", cmdutil.FlagErrorf("no client secret on stdin: pipe it in (for example: pass show NAME | mcpward login --client-secret-stdin NAME)")
}

// clientCredentials signs in to opts.Name with the client credentials
// grant: as opts.ClientID, with secret or the key of opts.PrivateKeyFile.
func clientCredentials(ctx, parent context.Context, a *app.App, opts *Options, secret string) error {
	cc, err := confidential(opts, secret)
	if err != nil {
		return err
	}
	err = signin.ClientCredentials(ctx, a.Host, a.LibrarySources(), opts.Name, cc)
	return headlessDone(parent, opts, err, "client credentials")
}

// confidential is the client of opts at the server's authorization
// server: opts.ClientID with secret, or with the key of
// opts.PrivateKeyFile.
func confidential(opts *Options, secret string) (oauth.ClientCredentials, error) {
	cc := oauth.ClientCredentials{ClientID: opts.ClientID, Secret: secret}
	if opts.PrivateKeyFile != "" {
		pem, err := readKey(opts.PrivateKeyFile)
		if err != nil {
			return cc, err
		}
		cc.Secret, cc.PrivateKeyPEM = "", pem
	}
	return cc, nil
}

// workloadIdentity signs in to opts.Name as a workload, with the JWT in
// opts.WorkloadTokenFile (the file is read by the OAuth client, which
// keeps its path for renewals and reports neither the path nor the JWT).
func workloadIdentity(ctx, parent context.Context, a *app.App, opts *Options) error {
	err := signin.WorkloadIdentity(ctx, a.Host, a.LibrarySources(), opts.Name, oauth.WorkloadIdentity{
		TokenFile: opts.WorkloadTokenFile, ClientID: opts.ClientID, Issuer: opts.WorkloadIssuer,
	})
	return headlessDone(parent, opts, err, "workload identity")
}

// enterpriseManaged signs in to opts.Name with the user's ID token in
// opts.IDTokenFile, exchanged at the enterprise IdP.
func enterpriseManaged(ctx, parent context.Context, a *app.App, opts *Options, secret string) error {
	idToken, err := readSmallFile(opts.IDTokenFile, "--id-token-file")
	if err != nil {
		return err
	}
	idpSecret := ""
	if opts.IdPClientSecretFile != "" {
		if idpSecret, err = readSmallFile(opts.IdPClientSecretFile, "--idp-client-secret-file"); err != nil {
			return err
		}
	}
	cc, err := confidential(opts, secret)
	if err != nil {
		return err
	}
	err = signin.EnterpriseManaged(ctx, a.Host, a.LibrarySources(), opts.Name, oauth.EnterpriseManaged{
		IdPTokenEndpoint: opts.IdPTokenEndpoint, SubjectToken: idToken,
		IdPClientID: opts.IdPClientID, IdPClientSecret: idpSecret, Client: cc,
	})
	return headlessDone(parent, opts, err, "enterprise-managed")
}

// headlessDone finishes a sign-in without a browser of the kind how: its
// discovery report and fix when it failed, "signed in" otherwise.
func headlessDone(parent context.Context, opts *Options, err error, how string) error {
	if err != nil {
		if rep := oauth.ReportOf(err); rep != nil && !opts.JSON {
			writeReport(opts, rep, err)
		}
		if parent.Err() != nil {
			return cmdutil.ErrCancelled
		}
		if fix := Fix(opts.Name, err); fix != "" {
			return &cmdutil.NotedError{Err: err, Note: fix}
		}
		return err
	}
	return Done(opts.IO, opts.JSON, opts.Name, oauth.SignedIn, "signed in to "+opts.Name+" ("+how+")")
}

// readSmallFile reads a token or secret file of at most maxKeyFile bytes,
// white space around its content removed. Its errors name the flag, never
// the file's content.
func readSmallFile(path, flag string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", cmdutil.FlagErrorf("%s cannot be read", flag)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", cmdutil.FlagErrorf("%s cannot be read", flag)
	}
	if len(b) > maxKeyFile {
		return "", cmdutil.FlagErrorf("%s is larger than a token", flag)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", cmdutil.FlagErrorf("%s is empty", flag)
	}
	return t, nil
}

// readKey reads a PEM private key file of at most maxKeyFile bytes. Its
// errors name the flag, never the file's content.
func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cmdutil.FlagErrorf("--private-key-file cannot be read")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, cmdutil.FlagErrorf("--private-key-file cannot be read")
	}
	if len(b) > maxKeyFile {
		return nil, cmdutil.FlagErrorf("--private-key-file is larger than a private key")
	}
	return b, nil
}

// writeReport writes, on stderr, where discovery stopped, step by step,
// and what to do.
func writeReport(opts *Options, rep *oauth.Report, err error) {
	if rep.Reason == "" {
		rep.Reason = refusal.ReasonOf(err)
	}
	view.WriteDiscovery(opts.IO.ErrOut, opts.Name, rep)
}
