package editing

import (
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
)

// LiteralSecret is one literal credential found in an entry: where it is
// and the ${VAR} form to write instead. Neither field holds the value.
type LiteralSecret struct {
	// Field is "env.KEY", "headers.NAME", "args[i]", "url", "command",
	// "cwd" or "headersHelper[i]".
	Field string `json:"field"`
	// Use is what to write instead, a ${VAR} reference.
	Use string `json:"use"`
}

// templateRE matches a ${…} reference.
var templateRE = regexp.MustCompile(`\$\{[^}]*\}`)

// authSchemeRE matches an Authorization scheme word and its space.
var authSchemeRE = regexp.MustCompile(`^(?i:bearer|basic|token)\s+`)

// literal reports whether v holds a letter or digit outside its ${…}
// references and its leading Authorization scheme word ("Bearer "): the
// separators between references ("${USER}:${PASS}") are not a secret.
func literal(v string) bool {
	rest := templateRE.ReplaceAllString(authSchemeRE.ReplaceAllString(v, ""), "")
	return strings.IndexFunc(rest, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// headerNameRE matches an HTTP header name written as one: words of
// letters, capitalized, joined by "-" ("X-Api-Key"). plainValue takes
// only X- names and the standard credential headers' names: a passphrase
// of capitalized words must stay a secret.
var headerNameRE = regexp.MustCompile(`^[A-Z][a-z]*(-[A-Z][A-Za-z]*)*$`)

// maxPlainNumber is the longest number plainValue takes for a setting
// (a length, a port, a count); a longer run of digits may be a PIN or a
// numeric key.
const maxPlainNumber = 8

// plainValue reports whether v, found under a credential-shaped name, is
// by its value no credential: a URL without userinfo or credential-shaped
// query (TOKEN_ENDPOINT=https://…), a short number (PASSWORD_MIN_LENGTH=12),
// a path (--token-file /run/secrets/t: the safe practice), a boolean, or a
// header name (AUTH_HEADER=X-Api-Key, an X- name or a standard one). Anything core/secret's shape tests
// flag is never plain.
func plainValue(v string) bool {
	if v == "" || secret.MaskLiterals(v) != v || strings.ContainsAny(v, " \t\n") {
		return false
	}
	if len(v) <= maxPlainNumber {
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return true
		}
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") {
		return true
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" && u.User == nil && (u.Scheme == "https" || u.Scheme == "http") {
		return true
	}
	switch v {
	case "Authorization", "Proxy-Authorization", "Cookie":
		return true
	}
	return strings.HasPrefix(v, "X-") && headerNameRE.MatchString(v)
}

// varName turns a key or flag name into an environment variable name:
// upper case, every other byte "_".
func varName(s string) string {
	s = strings.TrimLeft(s, "-")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "SECRET_" + out
	}
	return out
}

// FindLiteralSecrets returns the literal credentials of d, sorted by
// field: an env value under a credential-shaped key (unless the value is
// plainly none: see plainValue), a header value under
// a credential-shaped header name (after an Authorization scheme word
// such as "Bearer "), an argument after a credential-shaped flag (unless
// plainValue), and
// any value in which core/secret's shape tests find a credential (a
// --token=VALUE argument, a ?token= query, a URL password, a known token
// prefix). A value that is only ${VAR} references is never one.
func FindLiteralSecrets(d *definition.Definition) []LiteralSecret {
	var out []LiteralSecret
	server := varName(d.Name)
	flagged := func(v string) bool { return literal(v) && secret.MaskLiterals(v) != v }
	for k, v := range d.Env {
		if literal(v) && (secret.IsCredentialName(k) && !plainValue(v) || flagged(v)) {
			out = append(out, LiteralSecret{Field: "env." + k, Use: "${" + varName(k) + "}"})
		}
	}
	for k, v := range d.Headers {
		if literal(v) && (secret.IsCredentialHeader(k) || flagged(v)) {
			use := "${" + varName(k) + "}"
			if m := authSchemeRE.FindString(v); m != "" {
				use = m + "${" + server + "_TOKEN}"
			}
			out = append(out, LiteralSecret{Field: "headers." + k, Use: use})
		}
	}
	for i, a := range d.Args {
		field := "args[" + strconv.Itoa(i) + "]"
		switch {
		case i > 0 && secret.IsCredentialFlag(d.Args[i-1]) && literal(a) && !plainValue(a):
			out = append(out, LiteralSecret{Field: field, Use: "${" + varName(d.Args[i-1]) + "}"})
		case flagged(a):
			use := "${" + server + "_TOKEN}"
			if flag, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
				use = flag + "=${" + varName(flag) + "}"
			}
			out = append(out, LiteralSecret{Field: field, Use: use})
		}
	}
	for i, a := range d.HeadersHelper {
		if flagged(a) || i > 0 && secret.IsCredentialFlag(d.HeadersHelper[i-1]) && literal(a) {
			out = append(out, LiteralSecret{Field: "headersHelper[" + strconv.Itoa(i) + "]", Use: "${" + server + "_TOKEN}"})
		}
	}
	for _, f := range []struct{ name, v string }{{"command", d.Command}, {"cwd", d.Cwd}, {"url", d.URL}} {
		if flagged(f.v) {
			out = append(out, LiteralSecret{Field: f.name, Use: "a ${" + server + "_TOKEN} reference where the credential stands"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// RefuseLiteralSecrets returns the ReasonLiteralSecret refusal for found
// (nil when found is empty).
func RefuseLiteralSecrets(name string, s Scope, found []LiteralSecret) error {
	if len(found) == 0 {
		return nil
	}
	fields := make([]string, len(found))
	for i, f := range found {
		fields[i] = f.Field
	}
	detail := "a literal credential in " + strings.Join(fields, ", ")
	if s == ScopeProject {
		detail += " would be shared with everyone who clones the project"
	}
	return &SecretError{Err: &refusal.Error{Class: refusal.Config, Reason: ReasonLiteralSecret, Server: name, Detail: detail}, Found: found, Scope: s}
}

// SecretError is the refusal of literal credentials, with what to write
// instead.
type SecretError struct {
	Err   *refusal.Error
	Found []LiteralSecret
	Scope Scope
}

// Error returns the refusal's text.
func (e *SecretError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *SecretError) Unwrap() error { return e.Err }

// Fix is the one line of what to do.
func (e *SecretError) Fix() string {
	uses := make([]string, len(e.Found))
	for i, f := range e.Found {
		uses[i] = f.Field + ": " + f.Use
	}
	fix := "write a reference instead (" + strings.Join(uses, "; ") + ") and set the variable in your environment"
	if e.Scope != ScopeProject {
		fix += ", or add --allow-literal-secret to keep the value in this private file"
	} else {
		fix += " (--allow-literal-secret writes it anyway, and the next commit shares it)"
	}
	return fix
}
