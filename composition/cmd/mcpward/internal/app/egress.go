package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/ports"
)

// Egress widening. mcpward's egress policy (core/egress) admits https to
// public addresses and http to loopback only. A person widens it for their
// own network with rules in one file of theirs, which "mcpward egress"
// edits:
//
//	$XDG_CONFIG_HOME/mcpward/egress.json (else $HOME/.config/mcpward/egress.json)
//	{"allow": [{"target": "10.0.0.0/8"}, {"target": "build.corp", "http": true}],
//	 "deny":  [{"target": "wiki.corp"}]}
//
// An administrator presets rules, or forbids the person's own, under the
// key "egress" of a managed file:
//
//	{"egress": {"allow": [...], "deny": [...], "userRules": false}}
//
// No other file is read for egress: a project's .mcp.json or a private
// file can never widen it (an "egress" key there is ignored). Deny rules
// win over allow rules; no rule admits cloud metadata, link-local,
// unspecified, multicast or reserved addresses (core/egress.Rule).

// egressFileName is the user's egress file's name in ConfigDir.
const egressFileName = "egress.json"

// maxEgressBytes bounds the egress file.
const maxEgressBytes = 1 << 20

// EgressSourceUser and EgressSourceManaged label a rule's origin.
const (
	EgressSourceUser    = "user"
	EgressSourceManaged = "managed"
)

// EgressFile is the user's egress file: ConfigDir(e)/egress.json; "" when
// there is no configuration directory.
func EgressFile(e Env) string {
	dir := ConfigDir(e)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, egressFileName)
}

// EgressRule is one rule as written: a target and, for an allow rule,
// whether plain http is allowed too.
type EgressRule struct {
	// Target is a host name ("build.corp"), "*.NAME" for every name under
	// NAME (allow only), an IP address or a CIDR range ("10.0.0.0/8").
	Target string `json:"target"`
	// HTTP allows plain http as well as https (allow rules only).
	HTTP bool `json:"http,omitempty"`
}

// EgressRules are the rules of one file.
type EgressRules struct {
	Allow []EgressRule `json:"allow"`
	Deny  []EgressRule `json:"deny"`
}

// managedEgress is the "egress" object of a managed file.
type managedEgress struct {
	EgressRules
	// UserRules is false when the person's own rules are ignored (and
	// "mcpward egress allow" refuses to write them). Absent means true.
	UserRules *bool `json:"userRules"`
}

// ParseEgressTarget reads a rule's target: a CIDR range ("10.0.0.0/8",
// masked), an IP address (a one-address range), or a host name, possibly
// "*.NAME" (lower-cased, without a trailing dot). It refuses, with a
// sentence saying what to write, a URL, a port, a path, an IPv6 zone and
// anything core/egress would not take as a host name.
func ParseEgressTarget(s string) (prefix netip.Prefix, host string, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return netip.Prefix{}, "", errors.New("an empty target: give a host name, an IP address or a CIDR range")
	case strings.Contains(s, "://") || strings.ContainsAny(s, "?#@") || strings.Count(s, "/") > 1:
		return netip.Prefix{}, "", errors.New("a target is a host name, an IP address or a CIDR range, not a URL")
	case strings.Contains(s, "%"):
		return netip.Prefix{}, "", errors.New("an IPv6 zone is not a target")
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, "", errors.New("not a CIDR range such as 10.0.0.0/8 or fd00::/8")
		}
		return p.Masked(), "", nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), "", nil
	}
	if strings.Contains(s, ":") {
		return netip.Prefix{}, "", errors.New("a target has no port: it covers every port of the host")
	}
	host = strings.TrimSuffix(strings.ToLower(s), ".")
	if _, err := egress.New(&egress.Options{Allow: []egress.Rule{{Host: host}}}); err != nil {
		return netip.Prefix{}, "", errors.New("not a host name (letters, digits, '-' and '.', or *.NAME for every name under NAME; never a cloud metadata name)")
	}
	return netip.Prefix{}, host, nil
}

// CanonicalTarget is the target as stored and shown: a range masked, an
// address as a one-address range, a name lower-cased.
func CanonicalTarget(s string) (string, error) {
	p, h, err := ParseEgressTarget(s)
	if err != nil {
		return "", err
	}
	if h != "" {
		return h, nil
	}
	return p.String(), nil
}

// DecodeEgressRules reads an egress file (or a managed file's "egress"
// object): {"allow": [...], "deny": [...]}, each rule {"target", "http"};
// an unknown key, a malformed target, "http" on a deny rule, a wildcard
// deny or a duplicate key is an error.
func DecodeEgressRules(data []byte) (EgressRules, error) {
	var r EgressRules
	if len(bytes.TrimSpace(data)) == 0 {
		return r, nil
	}
	if err := strictDecode(data, &r); err != nil {
		return EgressRules{}, err
	}
	return r, r.check()
}

// strictDecode decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strictDecode(data []byte, v any) error {
	if err := checkNoDuplicateKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("not the documented shape: {\"allow\": [{\"target\": T, \"http\": B}], \"deny\": [{\"target\": T}]}")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// check refuses a malformed rule.
func (r EgressRules) check() error {
	for i, a := range r.Allow {
		if _, err := CanonicalTarget(a.Target); err != nil {
			return fmt.Errorf("allow rule %d: %w", i+1, err)
		}
	}
	for i, d := range r.Deny {
		if d.HTTP {
			return fmt.Errorf("deny rule %d: \"http\" is for allow rules (a deny rule refuses both)", i+1)
		}
		if strings.HasPrefix(d.Target, "*.") {
			return fmt.Errorf("deny rule %d: a deny rule for a name already covers every name under it; write it without \"*.\"", i+1)
		}
		if _, err := CanonicalTarget(d.Target); err != nil {
			return fmt.Errorf("deny rule %d: %w", i+1, err)
		}
	}
	return nil
}

// checkNoDuplicateKeys refuses an object holding a key twice (at any
// depth): encoding/json would keep the last silently.
func checkNoDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.New("not valid JSON")
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[t] {
					return errors.New("an object holds the same key twice")
				}
				top.keys[t] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// managedEgressOf reads the "egress" object of a managed file's bytes:
// present reports whether there is one; an error means it is malformed.
func managedEgressOf(data []byte) (m managedEgress, present bool, err error) {
	var root map[string]json.RawMessage
	if json.Unmarshal(data, &root) != nil {
		return managedEgress{}, false, nil // the document's own problem, reported by the decoder
	}
	raw, ok := root["egress"]
	if !ok {
		return managedEgress{}, false, nil
	}
	if err := strictDecode(raw, &m); err != nil {
		return managedEgress{}, true, errors.New("its \"egress\" object is " + strings.TrimPrefix(err.Error(), "not "))
	}
	return m, true, m.check()
}

// EgressState is the run's egress configuration: the rules in effect,
// where they come from, what was ignored and why, and the policy built
// from them (composition.Config.Egress).
type EgressState struct {
	// File is the user's egress file ("" when there is no configuration
	// directory).
	File string
	// User are the user's rules as read (also when ignored).
	User EgressRules
	// Managed are the managed files' preset rules.
	Managed EgressRules
	// UserIgnored says why the user's allow rules are not applied ("" when
	// they are): the managed setting forbids them, or a managed file cannot
	// be read (fail closed). The user's deny rules always apply.
	UserIgnored string
	// Problems are the egress files' own problems (a malformed egress
	// file, a malformed managed "egress" object): one sentence each.
	Problems []string
	// Policy is the policy in effect.
	Policy *egress.Policy
}

// UserRulesAllowed reports whether the managed setting lets the person's
// own allow rules apply.
func (s *EgressState) UserRulesAllowed() bool { return s.UserIgnored == "" }

// ReasonUserRulesForbidden is the UserIgnored of a managed "userRules":
// false.
const ReasonUserRulesForbidden = "your organization's managed setting (\"egress\": {\"userRules\": false}) ignores your own egress rules"

// reasonManagedUnreadable is the UserIgnored of an unusable managed file.
const reasonManagedUnreadable = "a managed file cannot be read, so whether it allows your own egress rules is unknown (fail closed)"

// loadEgress reads the user's egress file and the managed files' "egress"
// objects among srcs, and builds the policy. It never fails: what cannot
// be read applies nothing (a user file) or applies no user rule (a
// managed file), and is reported in Problems or UserIgnored.
func loadEgress(e Env, srcs []Source) *EgressState {
	st := &EgressState{File: EgressFile(e)}
	allowUser := true
	for _, s := range srcs {
		if s.Tier != ports.TierManaged || s.Status == StatusAbsent {
			continue
		}
		if p := definition.Decode(s.Src).Problem; s.Status != StatusRead || p != nil && p.Kind != definition.ProblemMalformedOverlay {
			st.UserIgnored = reasonManagedUnreadable
			continue
		}
		m, present, err := managedEgressOf(s.Src.Data)
		switch {
		case err != nil:
			st.Problems = append(st.Problems, "managed file "+s.Path+": "+err.Error())
			st.UserIgnored = reasonManagedUnreadable
		case present:
			st.Managed.Allow = append(st.Managed.Allow, m.Allow...)
			st.Managed.Deny = append(st.Managed.Deny, m.Deny...)
			if m.UserRules != nil && !*m.UserRules {
				allowUser = false
			}
		}
	}
	if !allowUser && st.UserIgnored == "" {
		st.UserIgnored = ReasonUserRulesForbidden
	}
	if st.File != "" {
		data, err := ReadRegular(st.File, maxEgressBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			st.Problems = append(st.Problems, "egress file "+st.File+": "+Unreadable(err, maxEgressBytes))
		default:
			r, err := DecodeEgressRules(data)
			if err != nil {
				st.Problems = append(st.Problems, "egress file "+st.File+": "+err.Error())
			} else {
				st.User = r
			}
		}
	}
	opts := &egress.Options{}
	add := func(r EgressRules, source string, allow bool) {
		for _, a := range r.Allow {
			if !allow {
				break
			}
			p, h, _ := ParseEgressTarget(a.Target)
			opts.Allow = append(opts.Allow, egress.Rule{Prefix: p, Host: h, HTTP: a.HTTP, Source: source})
		}
		for _, d := range r.Deny {
			p, h, _ := ParseEgressTarget(d.Target)
			if h != "" {
				opts.RefuseHosts = append(opts.RefuseHosts, h)
			} else {
				opts.RefusePrefixes = append(opts.RefusePrefixes, p)
			}
		}
	}
	add(st.Managed, EgressSourceManaged, true)
	// The person's deny rules only narrow: they always apply.
	add(st.User, EgressSourceUser, st.UserIgnored == "")
	p, err := egress.New(opts)
	if err != nil {
		// Every target was checked; fail closed all the same.
		st.Problems = append(st.Problems, "the egress rules cannot be applied")
		p = egress.Default()
	}
	st.Policy = p
	return st
}

// Admission is which rule admitted an http server, for list and doctor.
type Admission struct {
	// Target is the rule's target; Source its origin (EgressSourceUser,
	// EgressSourceManaged); HTTP whether it allows plain http.
	Target string `json:"target"`
	Source string `json:"source"`
	HTTP   bool   `json:"http,omitempty"`
}

// EgressAdmission returns the rule that admits r's URL when a rule (not
// the default) does; ok is false for a server the default admits, a stdio
// server, or a URL that cannot be judged (its host masked). It connects to
// nothing: a name's addresses are judged at dial time, where a range rule
// may admit them too.
func (a *App) EgressAdmission(ctx context.Context, r composition.ServerEvaluation) (Admission, bool) {
	if a.Egress == nil || r.Transport != definition.KindHTTP || r.Projection == nil || r.Projection.URL == "" {
		return Admission{}, false
	}
	u, err := url.Parse(r.Projection.URL)
	if err != nil {
		return Admission{}, false
	}
	adm, err := a.Egress.Policy.Explain(ctx, u)
	if err != nil || adm.Rule == nil {
		return Admission{}, false
	}
	return Admission{Target: adm.Rule.Target(), Source: adm.Rule.Source, HTTP: adm.Rule.HTTP}, true
}
