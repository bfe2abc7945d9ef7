package definition

import (
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// WorkingDirectory says where a stdio server runs.
type WorkingDirectory string

// The working directories of a stdio server. What runs includes where it
// runs: a program started in a directory loads what that directory holds
// (python3 -m mod imports ./mod.py, npx reads ./.npmrc), so a server from a
// file the person trusts for every workspace never runs in the repository
// they happen to open.
const (
	// WorkdirWritten: the definition's "cwd" (relative to the workspace
	// root when relative).
	WorkdirWritten WorkingDirectory = "written"
	// WorkdirWorkspace: no "cwd", and a project or local tier: the
	// workspace root, as every .mcp.json expects. Files there can change
	// what the server runs; the approval binds the definition, not them.
	WorkdirWorkspace WorkingDirectory = "workspace"
	// WorkdirNeutral: no "cwd", and a managed, user or plugin tier: a fresh,
	// empty directory only mcpward's user can enter, made for the launch
	// and removed after it (composition does this for every host).
	WorkdirNeutral WorkingDirectory = "neutral"
)

// WorkingDirectoryFor returns where a stdio server of tier runs when its
// expanded cwd is cwd: WorkdirWritten when cwd is not empty, otherwise
// WorkdirWorkspace for the project and local tiers and WorkdirNeutral for
// every other tier (managed, user, plugin, and a tier Resolve would not
// rank).
func WorkingDirectoryFor(tier ports.Tier, cwd string) WorkingDirectory {
	switch {
	case cwd != "":
		return WorkdirWritten
	case tier == ports.TierProject || tier == ports.TierLocal:
		return WorkdirWorkspace
	}
	return WorkdirNeutral
}

// The kinds of a ReviewNote.
const (
	// NoteMasked: a stretch of a command, argument or env value is masked
	// because it looks like a credential (by shape, or by where it stands),
	// so the person approving cannot read it although it decides what runs.
	// Marker is its marker (<redacted:DIGEST> or
	// <redacted:NAME default:DIGEST>).
	NoteMasked = "masked"
	// NoteCodeLoading: an env key changes which code runs (CodeLoadingEnv).
	NoteCodeLoading = "code_loading"
	// NoteRunsInWorkspace: a project or local stdio server without "cwd"
	// runs in the workspace root, whose files can change what it runs.
	NoteRunsInWorkspace = "runs_in_workspace"
	// NoteIDNHost: the URL's host is an internationalized name, shown both
	// ways.
	NoteIDNHost = "idn_host"
	// NoteMixedScriptHost: the URL's host mixes writing systems, as a
	// look-alike of another host does (аpple.com with a Cyrillic а).
	NoteMixedScriptHost = "mixed_script_host"
)

// ReviewNote is one thing the person approving must notice. Every field is
// fixed text, a field name or a marker: never a value.
type ReviewNote struct {
	// Kind is one of the Note* words.
	Kind string `json:"kind"`
	// Field is the field the note is about: "command", "args[2]",
	// `env["PYTHONPATH"]`, "cwd", "url".
	Field string `json:"field"`
	// Marker is the masked stretch's marker (NoteMasked only).
	Marker string `json:"marker,omitempty"`
	// Text says it in a sentence.
	Text string `json:"text"`
}

// ReviewPair is one env or header entry of a Review.
type ReviewPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Review is a definition as the person deciding whether to approve it must
// see it: what the project WROTE, so that two definitions that differ are
// never shown alike and code is never hidden. It is a separate view from
// the Projection, which status views, logs and errors print (env and
// header keys only, never values); a Review is for the person approving.
//
// Every string is the field as written, templates included (${NAME},
// ${NAME:-default}); no expanded environment value ever appears, since a
// Review is computed from the Definition alone. Env and header values are
// shown. Only the exact extent of a credential is masked, as
// secret.RedactedDigest (<redacted:3f2a9c01>), so two different masked
// literals can be told apart:
//   - in literal text, what secret.LiteralSpans finds: a credential's shape
//     (ghp_…, sk-…, a PEM body, …) or a credential standing in a position
//     (after --token=, ?token=, API_KEY=, Bearer, a userinfo password);
//   - in a value secret as a whole (under a credential-shaped env or header
//     key, or the argument after a credential-shaped flag), every run of
//     credential characters (secret.TokenRuns) of its literal text, but no
//     white space, quote or code character ($ ( ) ; & | < > ` { } [ ] \),
//     and not a header's leading authorization scheme ("Bearer ");
//   - a template's default is shown with its variable, ${NAME:-default},
//     with the same extents masked; a default that is a credential as a
//     whole shows as <redacted:NAME default:DIGEST>.
//
// Text written in the definition that reads like a marker ("<redacted")
// is shown as "<redacted!", so no literal can pass for a masked credential.
//
// Notes lists what the person must notice: every masked stretch in the
// command, an argument or an env value of a stdio server (it decides what
// runs and cannot be read), every env key that changes which code runs,
// a project or local stdio server without "cwd" (it runs in the
// workspace), and an internationalized or mixed-script host (shown both
// ways, egress.DisplayURL).
type Review struct {
	Name      string     `json:"name"`
	Tier      ports.Tier `json:"tier"`
	Origin    string     `json:"origin"`
	Transport Kind       `json:"transport"`
	Command   string     `json:"command,omitempty"`
	Args      []string   `json:"args,omitempty"`
	// Env and Headers are sorted by key; always arrays.
	Env []ReviewPair `json:"env"`
	Cwd string       `json:"cwd,omitempty"`
	// WorkingDirectory is where a stdio server runs ("" for the other
	// transports).
	WorkingDirectory WorkingDirectory `json:"workingDirectory,omitempty"`
	URL              string           `json:"url,omitempty"`
	Headers          []ReviewPair     `json:"headers"`
	HeadersHelper    []string         `json:"headersHelper,omitempty"`
	OAuth            *ProjectionOAuth `json:"oauth,omitempty"`
	// RequiresTrustedWorkspace, Refusal, IncludeTools, ExcludeTools and
	// Timeout are as in Projection.
	RequiresTrustedWorkspace bool      `json:"requiresTrustedWorkspace"`
	Refusal                  string    `json:"refusal,omitempty"`
	IncludeTools             *[]string `json:"includeTools,omitempty"`
	ExcludeTools             *[]string `json:"excludeTools,omitempty"`
	Timeout                  int64     `json:"timeout,omitempty"`
	// Notes is always an array.
	Notes []ReviewNote `json:"notes"`
}

// ReviewDefinition returns the Review of d (see Review). It reads nothing
// but d. ReviewDefinition(nil) is the zero Review with empty lists.
func ReviewDefinition(d *Definition) Review {
	r := Review{Env: []ReviewPair{}, Headers: []ReviewPair{}, Notes: []ReviewNote{}}
	if d == nil {
		return r
	}
	r.Name, r.Tier, r.Origin, r.Transport = d.Name, d.Tier, d.Origin, d.Kind
	r.RequiresTrustedWorkspace, r.Refusal = d.RequiresTrustedWorkspace, d.Refusal
	r.IncludeTools = reviewNames(d.IncludeTools)
	r.ExcludeTools = reviewNames(d.ExcludeTools)
	r.Timeout = d.Timeout.Milliseconds()
	stdio := d.Kind == KindStdio
	masked := func(field string, markers []string) {
		if !stdio {
			return
		}
		for _, m := range markers {
			r.Notes = append(r.Notes, ReviewNote{Kind: NoteMasked, Field: field, Marker: m,
				Text: field + " holds " + m + ", masked because it looks like a credential: it decides what runs and cannot be read here; approve only if you know what it is"})
		}
	}
	var ms []string
	r.Command, ms = reviewText(d.Command, false, false)
	masked("command", ms)
	if len(d.Args) > 0 {
		r.Args = make([]string, len(d.Args))
		for i, a := range d.Args {
			whole := i > 0 && secret.IsCredentialFlag(d.Args[i-1])
			r.Args[i], ms = reviewText(a, whole, false)
			masked("args["+strconv.Itoa(i)+"]", ms)
		}
	}
	for _, k := range matSortedKeys(d.Env) {
		field := "env[" + strconv.QuoteToASCII(k) + "]"
		v, ms := reviewText(d.Env[k], secret.IsCredentialName(k), false)
		r.Env = append(r.Env, ReviewPair{Key: k, Value: v})
		masked(field, ms)
		if stdio && CodeLoadingEnv(k) {
			r.Notes = append(r.Notes, ReviewNote{Kind: NoteCodeLoading, Field: field,
				Text: k + " changes which code the server loads or runs: read its value"})
		}
	}
	r.Cwd, ms = reviewText(d.Cwd, false, false)
	masked("cwd", ms)
	if stdio {
		r.WorkingDirectory = WorkingDirectoryFor(d.Tier, d.Cwd)
		if r.WorkingDirectory == WorkdirWorkspace {
			r.Notes = append(r.Notes, ReviewNote{Kind: NoteRunsInWorkspace, Field: "cwd",
				Text: "runs in the workspace: files there can change what it runs, and an approval binds this definition, not those files"})
		}
	}
	if d.URL != "" {
		u, _ := reviewText(d.URL, false, false)
		r.URL = egress.DisplayURL(u)
		if idn, mixed := egress.URLHostIsIDN(u); idn {
			r.Notes = append(r.Notes, ReviewNote{Kind: NoteIDNHost, Field: "url",
				Text: "the host is an internationalized name, shown as it is dialled (ASCII) and as it reads (Unicode)"})
			if mixed {
				r.Notes = append(r.Notes, ReviewNote{Kind: NoteMixedScriptHost, Field: "url",
					Text: "warning: the host mixes writing systems, as a look-alike of another host does; check it letter by letter"})
			}
		}
	}
	for _, k := range matSortedKeys(d.Headers) {
		v, _ := reviewText(d.Headers[k], secret.IsCredentialHeader(k), true)
		r.Headers = append(r.Headers, ReviewPair{Key: k, Value: v})
	}
	if len(d.HeadersHelper) > 0 {
		r.HeadersHelper = make([]string, len(d.HeadersHelper))
		for i, a := range d.HeadersHelper {
			if i > 0 && secret.IsCredentialFlag(d.HeadersHelper[i-1]) {
				r.HeadersHelper[i] = reviewWhole(a)
			} else {
				r.HeadersHelper[i] = reviewMaskDigests(a)
			}
		}
	}
	if o := d.OAuth; o != nil {
		po := &ProjectionOAuth{CallbackPort: o.CallbackPort}
		po.ClientID = reviewMaskDigests(o.ClientID)
		po.MetadataURL = egress.DisplayURL(reviewMaskDigests(o.MetadataURL))
		po.ClientMetadataURL = egress.DisplayURL(reviewMaskDigests(o.ClientMetadataURL))
		for _, s := range o.Scopes {
			po.Scopes = append(po.Scopes, reviewMaskDigests(s))
		}
		r.OAuth = po
	}
	return r
}

// reviewNames returns a tool filter for the review: nil for nil, else a
// new list with credential extents masked.
func reviewNames(names []string) *[]string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = reviewMaskDigests(n)
	}
	return &out
}

// reviewWhole masks every run of credential characters of a literal that
// is secret as a whole.
func reviewWhole(s string) string {
	out, _ := reviewMaskRuns(s, secret.TokenRuns(s))
	return out
}

// reviewMaskRuns replaces each span of s (sorted, disjoint) by the digest
// marker of its text, escapes the text between them (reviewEscape) and
// returns the markers.
func reviewMaskRuns(s string, spans [][2]int) (string, []string) {
	if len(spans) == 0 {
		return reviewEscape(s), nil
	}
	var b strings.Builder
	var markers []string
	last := 0
	for _, sp := range spans {
		b.WriteString(reviewEscape(s[last:sp[0]]))
		m := secret.RedactedDigest(s[sp[0]:sp[1]])
		b.WriteString(m)
		markers = append(markers, m)
		last = sp[1]
	}
	b.WriteString(reviewEscape(s[last:]))
	return b.String(), markers
}

// reviewMaskDigests is secret.MaskDigests with the text between the
// markers escaped (reviewEscape).
func reviewMaskDigests(s string) string {
	out, _ := reviewMaskRuns(s, secret.LiteralSpans(s))
	return out
}

// reviewMarkerOpen opens every marker; reviewEscape makes sure written text
// never shows it.
const reviewMarkerOpen = "<redacted"

// reviewEscape returns literal text written in a definition as the review
// shows it: every "<redacted" followed by "!", so a literal that imitates a
// marker ("--token=<redacted:1a2b3c4d>", written to look like a masked
// credential) is never shown as one. The mapping is injective: a real
// marker continues with ":" or ">".
func reviewEscape(s string) string {
	if !strings.Contains(s, reviewMarkerOpen) {
		return s
	}
	return strings.ReplaceAll(s, reviewMarkerOpen, reviewMarkerOpen+"!")
}

// authSchemes are the authorization scheme words a header value secret as
// a whole may start with; they are shown.
var authSchemes = []string{"bearer ", "basic ", "token ", "digest ", "bot "}

// reviewText returns a value as written, masked for the review (see
// Review), and the markers of what it masked. whole says the value is
// secret as a whole; header that it is a header value (a leading
// authorization scheme stays shown).
func reviewText(s string, whole, header bool) (string, []string) {
	if s == "" {
		return "", nil
	}
	parts, bad := matParse(s)
	if bad >= 0 {
		// A malformed "${" and what follows is literal text to a reader.
		parts = append(parts, matPart{text: s[bad:], raw: s[bad:]})
	}
	// Each part's region in the skeleton: literal text, a default, or a
	// placeholder for a template without one.
	type region struct{ start, end int }
	regions := make([]region, len(parts))
	var sk strings.Builder
	for i, p := range parts {
		start := sk.Len()
		switch {
		case !p.template, p.hasDefault:
			sk.WriteString(p.text)
		default:
			sk.WriteString(matPlaceholder)
		}
		regions[i] = region{start, sk.Len()}
	}
	skel := sk.String()
	var spans [][2]int
	if whole {
		for i, p := range parts {
			if p.template && !p.hasDefault {
				continue
			}
			rg := regions[i]
			text := skel[rg.start:rg.end]
			skip := 0
			if header && i == 0 && !p.template {
				for _, sch := range authSchemes {
					if len(text) >= len(sch) && strings.EqualFold(text[:len(sch)], sch) {
						skip = len(sch)
						break
					}
				}
			}
			for _, run := range secret.TokenRuns(text[skip:]) {
				spans = append(spans, [2]int{rg.start + skip + run[0], rg.start + skip + run[1]})
			}
		}
	} else {
		spans = secret.LiteralSpans(skel)
	}
	// clip returns the spans within [start, end), relative to start.
	clip := func(start, end int) [][2]int {
		var out [][2]int
		for _, sp := range spans {
			a, b := max(sp[0], start), min(sp[1], end)
			if a < b {
				out = append(out, [2]int{a - start, b - start})
			}
		}
		return out
	}
	var b strings.Builder
	var markers []string
	for i, p := range parts {
		rg := regions[i]
		switch {
		case !p.template:
			out, ms := reviewMaskRuns(p.text, clip(rg.start, rg.end))
			b.WriteString(out)
			markers = append(markers, ms...)
		case !p.hasDefault:
			b.WriteString(p.raw)
		default:
			in := clip(rg.start, rg.end)
			switch {
			case len(in) == 0:
				b.WriteString("${" + p.name + ":-" + reviewEscape(p.text) + "}")
			case len(in) == 1 && in[0] == [2]int{0, len(p.text)}:
				m := secret.RedactedDefault(p.name, p.text)
				b.WriteString(m)
				markers = append(markers, m)
			default:
				out, ms := reviewMaskRuns(p.text, in)
				b.WriteString("${" + p.name + ":-" + out + "}")
				markers = append(markers, ms...)
			}
		}
	}
	return b.String(), markers
}
