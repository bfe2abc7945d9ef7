package secret_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/secret"
)

func TestIsCredentialName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		// Word rule.
		{"token suffix", "GITHUB_TOKEN", true},
		{"token alone", "TOKEN", true},
		{"token lower", "token", true},
		{"secret", "AWS_SECRET", true},
		{"password dotted", "db.password", true},
		{"passwd", "LDAP_PASSWD", true},
		{"pwd", "MYSQL_PWD", true},
		{"pass", "SMTP_PASS", true},
		{"auth dashed", "x-auth-token", true},
		{"auth word", "BASIC_AUTH", true},
		{"authorization", "HTTP_AUTHORIZATION", true},
		{"credential", "GOOGLE_CREDENTIAL", true},
		{"credentials", "GOOGLE_APPLICATION_CREDENTIALS", true},
		{"creds", "aws-creds", true},
		{"cookie", "SESSION_COOKIE", true},
		{"cookie camel", "authCookie", true},
		{"session", "SESSION_ID", true},
		{"apikey one word", "APIKEY", true},
		{"apikey lower", "openai_apikey", true},
		{"pat", "GITHUB_PAT", true},
		{"dsn", "SENTRY_DSN", true},
		{"camel token", "githubToken", true},
		{"camel secret mid", "mySecretValue", true},
		{"word after digits", "TOKEN2", true},
		{"digits inside", "V2_TOKEN_3", true},
		{"acronym then word", "APIToken", true},
		{"other separators", "my token", true},
		{"slash separated", "a/token", true},
		// Phrase rule.
		{"api key", "OPENAI_API_KEY", true},
		{"api key camel", "apiKey", true},
		{"api key acronym camel", "APIKey", true},
		{"api keys plural", "API_KEYS", true},
		{"api key mid", "MY_API_KEY_ID", true},
		{"access key", "AWS_ACCESS_KEY_ID", true},
		{"private key", "PRIVATE_KEY_PEM", true},
		{"client secret", "oauth.client_secret", true},
		{"api key dashed", "x-api-key", true},
		// Last-word rule.
		{"ssh key", "SSH_KEY", true},
		{"key alone", "KEY", true},
		{"key lower camel", "signingKey", true},
		{"key then digits", "SSH_KEY_2", true},
		{"key digits glued", "SSH_KEY2", true},
		// Near misses.
		{"path", "PATH", false},
		{"home", "HOME", false},
		{"node options", "NODE_OPTIONS", false},
		{"keyboard layout", "KEYBOARD_LAYOUT", false},
		{"monkey", "MONKEY", false},
		{"tokenizer", "TOKENIZER_MODEL", false},
		{"key not last", "KEY_ID", false},
		{"keys last", "SSH_KEYS", false},
		{"passphrase", "PASSPHRASE", false},
		{"pathology", "PATHOLOGY_DIR", false},
		{"patch", "PATCH_LEVEL", false},
		{"oauth is not auth", "OAUTH2_CLIENT_ID", false},
		{"author", "GIT_AUTHOR_NAME", false},
		{"sessions plural", "MAX_SESSIONS", false},
		{"secretary", "SECRETARY", false},
		{"api alone", "API_URL", false},
		{"access alone", "ACCESS_LOG", false},
		{"private dir", "PRIVATE_DIR", false},
		{"empty", "", false},
		{"separators only", "__-.", false},
		{"digits only", "123", false},
		{"non ascii", "TÖKEN", false},
		{"lang", "LANG", false},
		{"debug", "DEBUG", false},
		// Exempt: the name describes a credential (where it is, how it
		// behaves, what it is called), negates a switch, or is the shell's
		// working directory.
		{"ssh agent socket", "SSH_AUTH_SOCK", false},
		{"token file", "GITHUB_TOKEN_FILE", false},
		{"api key file", "MY_API_KEY_FILE", false},
		{"private key path", "PRIVATE_KEY_PATH", false},
		{"key path camel", "sshKeyPath", false},
		{"password file docker", "POSTGRES_PASSWORD_FILE", false},
		{"secrets dir", "SECRET_DIR", false},
		{"token url", "OAUTH_TOKEN_URL", false},
		{"auth endpoint", "AUTH_ENDPOINT", false},
		{"auth host", "AUTH_HOST", false},
		{"auth server port", "AUTH_SERVER_PORT", false},
		{"dbus session address", "DBUS_SESSION_BUS_ADDRESS", false},
		{"token length", "TOKEN_LENGTH", false},
		{"session timeout", "SESSION_TIMEOUT", false},
		{"auth mode", "AUTH_MODE", false},
		{"auth type", "AUTH_TYPE", false},
		{"password min length", "PASSWORD_MIN_LENGTH", false},
		{"cookie name", "SESSION_COOKIE_NAME", false},
		{"secret name k8s", "SECRET_NAME", false},
		{"descriptor then digits", "TOKEN_FILE_2", false},
		{"negated switch", "NO_AUTH", false},
		{"negated switch lower", "no-auth", false},
		{"working directory", "PWD", false},
		{"old working directory", "OLDPWD", false},
		// Not exempt: the descriptor is not the last word, or PWD is one of
		// several words.
		{"file then token", "FILE_TOKEN", true},
		{"mysql pwd", "MYSQL_PWD", true},
		{"path key", "PATH_KEY", true},
		{"session id", "SESSION_ID", true},
		{"auth header holds the value", "AUTH_HEADER", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, secret.IsCredentialName(tt.in), "IsCredentialName(%q)", tt.in)
		})
	}
}

func TestIsCredentialHeader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"authorization", "Authorization", true},
		{"authorization lower", "authorization", true},
		{"authorization upper", "AUTHORIZATION", true},
		{"proxy authorization", "Proxy-Authorization", true},
		{"cookie", "Cookie", true},
		{"set cookie", "Set-Cookie", true},
		{"x api key", "X-Api-Key", true},
		{"x api key mixed", "x-API-key", true},
		{"api key", "Api-Key", true},
		{"x auth token", "X-Auth-Token", true},
		{"word rule", "X-Goog-Api-Key", true},
		{"custom token", "X-Custom-Token", true},
		{"private token", "Private-Token", true},
		{"session", "X-Session-Id", true},
		{"content type", "Content-Type", false},
		{"accept", "Accept", false},
		{"user agent", "User-Agent", false},
		{"keyboard", "X-Keyboard", false},
		{"mcp protocol version", "MCP-Protocol-Version", false},
		{"trace", "traceparent", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, secret.IsCredentialHeader(tt.in), "IsCredentialHeader(%q)", tt.in)
		})
	}
}

// TestHeaderNamesAreCredentialNames checks that every credential name is
// also a credential header (the header rule only widens the name rule).
func TestHeaderNamesAreCredentialNames(t *testing.T) {
	for _, n := range []string{"GITHUB_TOKEN", "apiKey", "SSH_KEY", "db.password", "PATH", "MONKEY"} {
		if secret.IsCredentialName(n) {
			assert.True(t, secret.IsCredentialHeader(n), n)
		}
	}
}
