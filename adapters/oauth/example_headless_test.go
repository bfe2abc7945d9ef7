package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"os"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/ports/portstest"
)

// A service signs in with no user: the client credentials grant, the
// client authenticating with a private key the host holds
// (private_key_jwt). The key and the client are then kept in the token
// store, and the Authenticator renews the access token by the same grant.
func ExampleClient_SignInClientCredentials() {
	c, err := oauth.New(oauth.Options{
		Client: func(context.Context, *url.URL) (*http.Client, error) { return http.DefaultClient, nil },
		Store:  portstest.NewTokenStore(), Locker: portstest.NewLocker(),
	})
	if err != nil {
		return
	}
	key, err := os.ReadFile("/etc/mcp/client-key.pem")
	if err != nil {
		return
	}
	s := oauth.Server{ID: "reports", URL: "https://reports.example.com/mcp", ClientID: "reports-bot"}
	if err := c.SignInClientCredentials(context.Background(), s, oauth.ClientCredentials{PrivateKeyPEM: key}); err != nil {
		return // a *refusal.Error: its Reason says what to fix
	}
	a, _ := c.Authenticator(s) // the transport's ports.Authenticator
	_ = a
}

// A pre-registered confidential client signs in interactively: the secret
// is given at sign-in, never in the definition, and kept in the token
// store for refreshes and revocation.
func ExampleClient_SignInWithOptions() {
	c, err := oauth.New(oauth.Options{
		Client: func(context.Context, *url.URL) (*http.Client, error) { return http.DefaultClient, nil },
		Store:  portstest.NewTokenStore(), Locker: portstest.NewLocker(),
	})
	if err != nil {
		return
	}
	s := oauth.Server{ID: "notes", URL: "https://notes.example.com/mcp", ClientID: "notes-desktop"}
	open := func(authURL string) error { return nil } // show or open authURL
	_ = c.SignInWithOptions(context.Background(), s, oauth.SignInOptions{ClientSecret: os.Getenv("NOTES_CLIENT_SECRET"), CallbackPort: 8765}, open)
}
