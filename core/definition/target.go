package definition

import (
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
)

// The refusals of a secret that would decide what runs or where it
// connects. Each is both a Definition.Refusal word (Decode decides it on
// the definition as written) and the Reason of the *refusal.Error (Class
// Config) Materialize returns for the same definition, and, for a URL,
// for an expansion whose secret value would reach the URL's scheme, host
// or port.
//
// A secret stretch is one Stretch.Secret describes: a credential-shaped
// variable (secret.IsCredentialName), or a template written where a
// credential goes (Bearer ${X}, --token=${X}, ?token=${X}, …) whatever its
// variable is called. Its expanded value stays out of the fingerprint so
// that rotating a credential keeps an approval; such a value must then
// never choose the program, its working directory or the host it talks
// to, which an approval is about. The fix is to write those as text, or
// through a variable whose name is not credential-shaped (its value is
// then part of the fingerprint), and to hand the credential over in
// "env", "headers" or an argument.
const (
	// RefusalSecretInCommand: "command" holds a secret stretch.
	RefusalSecretInCommand = "secret_in_command"
	// RefusalSecretInCwd: "cwd" holds a secret stretch.
	RefusalSecretInCwd = "secret_in_cwd"
	// RefusalSecretInURL: a secret stretch of "url" decides its scheme,
	// host or port (a userinfo password, a path or a query value may be
	// secret).
	RefusalSecretInURL = "secret_in_url_host"
)

// matSkeleton returns s with every template replaced by matPlaceholder,
// the offset of each placeholder in it and each template's variable
// name, up to the first malformed template (whose text is kept as is).
func matSkeleton(s string) (sk string, offs []int, names []string) {
	var b strings.Builder
	b.Grow(len(s) + 16)
	i := 0
	for {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		at := i + j
		b.WriteString(s[i:at])
		p, n := matParseTemplate(s[at:])
		if n == 0 {
			b.WriteString(s[at:])
			break
		}
		offs = append(offs, b.Len())
		names = append(names, p.name)
		b.WriteString(matPlaceholder)
		i = at + n
	}
	return b.String(), offs, names
}

// urlTargetRegion returns the spans of a URL text t that decide where it
// connects: its scheme with "://", and its host and port (the authority
// after any userinfo, up to the first "/", "?" or "#"). Without "://" the
// text up to its first "/", "?" or "#" decides everything and is one
// span.
func urlTargetRegion(t string) [2][2]int {
	i := strings.Index(t, "://")
	if i < 0 {
		end := len(t)
		if j := strings.IndexAny(t, "/?#"); j >= 0 {
			end = j
		}
		return [2][2]int{{0, end}, {end, end}}
	}
	auth := i + 3
	authEnd := len(t)
	if j := strings.IndexAny(t[auth:], "/?#"); j >= 0 {
		authEnd = auth + j
	}
	host := auth
	if at := strings.LastIndexByte(t[auth:authEnd], '@'); at >= 0 {
		host = auth + at + 1
	}
	return [2][2]int{{0, auth}, {host, authEnd}}
}

// inRegion reports whether [start, end) meets a span of r; an empty
// stretch meets a span it stands inside of.
func inRegion(r [2][2]int, start, end int) bool {
	for _, sp := range r {
		if sp[0] >= sp[1] {
			continue
		}
		if start == end {
			if sp[0] <= start && start < sp[1] {
				return true
			}
			continue
		}
		if start < sp[1] && sp[0] < end {
			return true
		}
	}
	return false
}

// targetRefusal returns the refusal word of d when a secret template, as
// written, would decide its command, its cwd or its URL's scheme, host or
// port; "" otherwise. It decides on the text alone, exactly as
// Materialize marks stretches secret.
//
// A definition with a "${" that starts no well-formed template in any
// value Materialize expands is Materialize's invalid_template, refused
// before this rule, so it is none of this rule's: Decode and Materialize
// name the same reason.
func targetRefusal(d *Definition) string {
	if malformedTemplate(d) {
		return ""
	}
	switch {
	case d.Kind == KindStdio && targetSecretIn(d.Command, false):
		return RefusalSecretInCommand
	case d.Kind == KindStdio && targetSecretIn(d.Cwd, false):
		return RefusalSecretInCwd
	case d.Kind != KindStdio && targetSecretIn(d.URL, true):
		return RefusalSecretInURL
	}
	return ""
}

// targetSecretIn reports whether a template of s as written is secret
// (credential-shaped variable, or a position where a credential goes)
// and, when url, stands in the URL's scheme, host or port. It allocates
// only for a value that has a secret template.
func targetSecretIn(s string, url bool) bool {
	if !strings.Contains(s, "${") {
		return false
	}
	byName := false
	for i := 0; ; {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		p, n := matParseTemplate(s[i+j:])
		if n == 0 {
			break
		}
		if secret.IsCredentialName(p.name) {
			byName = true
			break
		}
		i += j + n
	}
	_, pos := matPositions(s, false)
	if !byName && len(pos) == 0 {
		return false
	}
	if !url {
		return true
	}
	sk, offs, names := matSkeleton(s)
	r := urlTargetRegion(sk)
	cur := matPosCursor(pos)
	for k, off := range offs {
		if (cur.has(k) || secret.IsCredentialName(names[k])) && inRegion(r, off, off+len(matPlaceholder)) {
			return true
		}
	}
	return false
}

// targetError returns the refusal Materialize gives m when a secret
// stretch decides its command, cwd, or its URL's scheme, host or port —
// as written (targetRefusal, what Decode refuses), or, for the URL, in the
// expanded text too (a secret value holding "@" or "/" could move the
// host) — nil otherwise.
func targetError(m *Materialized) error {
	// A stretch is secret exactly when its template is, as written (see
	// Stretch.Secret), so a value without a secret stretch has no secret
	// template either.
	d := m.Def
	reason := ""
	switch {
	case d.Kind == KindStdio && m.Command.hasSecretStretch():
		reason = RefusalSecretInCommand
	case d.Kind == KindStdio && m.Cwd.hasSecretStretch():
		reason = RefusalSecretInCwd
	case d.Kind != KindStdio && m.URL.hasSecretStretch():
		if targetSecretIn(d.URL, true) {
			reason = RefusalSecretInURL
			break
		}
		r := urlTargetRegion(m.URL.Text)
		for _, s := range m.URL.Stretches {
			if s.Secret && inRegion(r, s.Start, s.End) {
				reason = RefusalSecretInURL
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return &refusal.Error{Class: refusal.Config, Reason: reason, Server: d.Name, Detail: targetDetail[reason]}
}

// targetDetail is the fixed phrase of each target refusal.
var targetDetail = map[string]string{
	RefusalSecretInCommand: "a credential-shaped variable or a secret position decides the command",
	RefusalSecretInCwd:     "a credential-shaped variable or a secret position decides the cwd",
	RefusalSecretInURL:     "a credential-shaped variable or a secret position decides the url's scheme, host or port",
}

// malformedTemplate reports whether a value of d that Materialize expands
// (command, args, env, cwd, url, headers) holds a "${" that starts no
// well-formed template, read as Materialize reads it.
func malformedTemplate(d *Definition) bool {
	if malformedIn(d.Command) || malformedIn(d.Cwd) || malformedIn(d.URL) {
		return true
	}
	for _, a := range d.Args {
		if malformedIn(a) {
			return true
		}
	}
	for _, v := range d.Env {
		if malformedIn(v) {
			return true
		}
	}
	for _, v := range d.Headers {
		if malformedIn(v) {
			return true
		}
	}
	return false
}

// malformedIn reports whether s holds a "${" that starts no well-formed
// template.
func malformedIn(s string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			return false
		}
		_, n := matParseTemplate(s[i+j:])
		if n == 0 {
			return true
		}
		i += j + n
	}
}
