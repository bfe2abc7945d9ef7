package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// The Grants of the auth scenarios that sign in without a browser.
const (
	// GrantClientCredentials: the OAuth client credentials grant, the
	// client authenticated with the context's secret or private key.
	GrantClientCredentials = "client_credentials"
	// GrantEnterpriseManaged: MCP Enterprise-Managed Authorization (the
	// suite's enterprise-managed-authorization, and the cross-app access
	// scenarios of the older suite): the user's ID token exchanged at the
	// enterprise IdP for an identity assertion grant, then the JWT-bearer
	// grant.
	GrantEnterpriseManaged = "enterprise_managed"
	// GrantWorkloadIdentity: MCP workload identity federation (the suite's
	// wif-jwt-bearer): the workload's JWT presented with the JWT-bearer
	// grant.
	GrantWorkloadIdentity = "workload_identity"
)

// authGrant returns the Grant of the auth scenario name.
func authGrant(name string) string {
	switch {
	case strings.HasPrefix(name, "auth/client-credentials-"):
		return GrantClientCredentials
	case name == "auth/enterprise-managed-authorization", strings.HasPrefix(name, "auth/cross-app-access-"):
		return GrantEnterpriseManaged
	case name == "auth/wif-jwt-bearer":
		return GrantWorkloadIdentity
	}
	return GrantCode
}

// AuthContext is what the suite's auth extensions add to its context: the
// workload identity scenario's JWTs, one to use and two a client must
// refuse before sending them.
type AuthContext struct {
	ValidJWT         string `json:"valid_jwt"`
	WrongAudienceJWT string `json:"wrong_audience_jwt"`
	ExpiredJWT       string `json:"expired_jwt"`
}

// signInHeadless signs in without a browser, as sc.Grant says.
func signInHeadless(ctx context.Context, host *composition.Host, srcs []definition.Source, sc Scenario, cc Context, log io.Writer) error {
	switch sc.Grant {
	case GrantClientCredentials:
		creds := oauth.ClientCredentials{ClientID: cc.ClientID, Secret: cc.ClientSecret, Alg: cc.SigningAlgorithm}
		if cc.PrivateKeyPEM != "" {
			creds.Secret, creds.PrivateKeyPEM = "", []byte(cc.PrivateKeyPEM)
		}
		if err := signin.ClientCredentials(ctx, host, srcs, serverName, creds); err != nil {
			return err
		}
		fmt.Fprintln(log, "signed in (client credentials)")
		return nil
	case GrantEnterpriseManaged:
		x := oauth.EnterpriseManaged{
			IdPTokenEndpoint: cc.IdPTokenEndpoint,
			SubjectToken:     cc.IdPIDToken,
			IdPClientID:      cc.IdPClientID,
			Client:           oauth.ClientCredentials{ClientID: cc.ClientID, Secret: cc.ClientSecret},
		}
		if err := signin.EnterpriseManaged(ctx, host, srcs, serverName, x); err != nil {
			return err
		}
		fmt.Fprintln(log, "signed in (enterprise-managed)")
		return nil
	case GrantWorkloadIdentity:
		return workloadSignIn(ctx, host, srcs, cc, log)
	}
	return fmt.Errorf("no sign-in for grant %q", sc.Grant)
}

// workloadSignIn is the workload identity sign-in: the JWTs the client
// must refuse are tried first and must be refused before anything is sent
// (an audience that is not the authorization server, an expiry past), then
// the valid one is presented, each from a token file as a platform would
// write it.
func workloadSignIn(ctx context.Context, host *composition.Host, srcs []definition.Source, cc Context, log io.Writer) error {
	if cc.ValidJWT == "" {
		return errors.New("the context holds no workload JWT")
	}
	dir, err := os.MkdirTemp("", "mcpward-conformance-wif-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "token")
	try := func(jwt string) error {
		if err := os.WriteFile(file, []byte(jwt), 0o600); err != nil {
			return err
		}
		return signin.WorkloadIdentity(ctx, host, srcs, serverName, oauth.WorkloadIdentity{TokenFile: file, ClientID: cc.ClientID})
	}
	for _, bad := range []struct{ jwt, reason string }{
		{cc.WrongAudienceJWT, oauth.ReasonWorkloadAudienceMismatch},
		{cc.ExpiredJWT, oauth.ReasonWorkloadTokenExpired},
	} {
		if bad.jwt == "" {
			continue
		}
		err := try(bad.jwt)
		if refusal.ReasonOf(err) != bad.reason {
			return fmt.Errorf("a workload JWT the client must refuse (%s) was not refused before sending: %s", bad.reason, describe(err))
		}
		fmt.Fprintf(log, "refused before sending: %s\n", bad.reason)
	}
	if err := try(cc.ValidJWT); err != nil {
		return err
	}
	fmt.Fprintln(log, "signed in (workload identity)")
	return nil
}
