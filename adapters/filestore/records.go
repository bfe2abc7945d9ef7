package filestore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpward/mcpward/ports"
)

// approvalsVersion is the format version of approvals.json.
const approvalsVersion = 1

// maxApprovalsFile bounds what List reads; a larger file is corrupt.
const maxApprovalsFile = 64 << 20

// maxAuditFile bounds what Records reads; a larger log is ErrUnavailable
// rather than an exhausted memory.
const maxAuditFile = 1 << 30

// bstr is a string stored losslessly in JSON: a JSON string when it is valid
// UTF-8, {"b64": standard base64} otherwise.
type bstr string

type b64Form struct {
	B64 string `json:"b64"`
}

// MarshalJSON implements json.Marshaler.
func (b bstr) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(b)) {
		return json.Marshal(string(b))
	}
	return json.Marshal(b64Form{B64: base64.StdEncoding.EncodeToString([]byte(b))})
}

// UnmarshalJSON implements json.Unmarshaler, accepting only the two forms
// MarshalJSON writes.
func (b *bstr) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = bstr(s)
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return errors.New("bad string form")
	}
	var f b64Form
	if err := strictDecode(data, &f); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(f.B64)
	if err != nil || utf8.Valid(raw) {
		return errors.New("bad base64 string form")
	}
	*b = bstr(raw)
	return nil
}

// utcTime is a time stored as RFC 3339 in UTC: the instant round-trips
// exactly (a zone offset with seconds cannot distort it).
type utcTime time.Time

// MarshalJSON implements json.Marshaler.
func (t utcTime) MarshalJSON() ([]byte, error) {
	return time.Time(t).UTC().MarshalJSON()
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *utcTime) UnmarshalJSON(data []byte) error {
	var v time.Time
	if len(data) == 0 || data[0] != '"' {
		return errors.New("bad time")
	}
	if err := v.UnmarshalJSON(data); err != nil {
		return err
	}
	*t = utcTime(v.UTC())
	return nil
}

type fileIdentity struct {
	ServerID    bstr `json:"serverId"`
	Tier        bstr `json:"tier"`
	Origin      bstr `json:"origin"`
	Fingerprint bstr `json:"fingerprint"`
	Security    bstr `json:"security"`
	Repository  bstr `json:"repository"`
	Generation  bstr `json:"generation"`
}

type fileApproval struct {
	Identity  fileIdentity `json:"identity"`
	GrantedAt utcTime      `json:"grantedAt"`
	GrantedBy bstr         `json:"grantedBy"`
}

type approvalsDoc struct {
	Version   int            `json:"version"`
	Approvals []fileApproval `json:"approvals"`
}

type fileRecord struct {
	Time     utcTime      `json:"time"`
	Action   bstr         `json:"action"`
	Identity fileIdentity `json:"identity"`
	Outcome  bstr         `json:"outcome"`
	Reason   bstr         `json:"reason"`
	Actor    bstr         `json:"actor"`
}

func toFileIdentity(id ports.Identity) fileIdentity {
	return fileIdentity{
		ServerID:    bstr(id.ServerID),
		Tier:        bstr(id.Tier),
		Origin:      bstr(id.Origin),
		Fingerprint: bstr(id.Fingerprint),
		Security:    bstr(id.Security),
		Repository:  bstr(id.Repository),
		Generation:  bstr(id.Generation),
	}
}

func (f fileIdentity) identity() ports.Identity {
	return ports.Identity{
		ServerID:    string(f.ServerID),
		Tier:        ports.Tier(f.Tier),
		Origin:      string(f.Origin),
		Fingerprint: string(f.Fingerprint),
		Security:    string(f.Security),
		Repository:  string(f.Repository),
		Generation:  string(f.Generation),
	}
}

// strictDecode decodes exactly one JSON value with no unknown fields and
// nothing after it.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// decodeApprovals parses approvals.json.
func decodeApprovals(data []byte) ([]ports.Approval, error) {
	var doc approvalsDoc
	if err := strictDecode(data, &doc); err != nil {
		return nil, err
	}
	if doc.Version != approvalsVersion {
		return nil, errors.New("unknown version")
	}
	var out []ports.Approval
	for _, a := range doc.Approvals {
		out = append(out, ports.Approval{
			Identity:  a.Identity.identity(),
			GrantedAt: time.Time(a.GrantedAt),
			GrantedBy: string(a.GrantedBy),
		})
	}
	return out, nil
}

// encodeApprovals renders approvals.json.
func encodeApprovals(list []ports.Approval) ([]byte, error) {
	doc := approvalsDoc{Version: approvalsVersion, Approvals: []fileApproval{}}
	for _, a := range list {
		doc.Approvals = append(doc.Approvals, fileApproval{
			Identity:  toFileIdentity(a.Identity),
			GrantedAt: utcTime(a.GrantedAt),
			GrantedBy: bstr(a.GrantedBy),
		})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// encodeRecord renders one audit line, newline included: the bytes
// json.Marshal writes for r's fileRecord, appended field by field without
// reflection (FuzzEncodeRecord holds the two equal). It fails, as
// json.Marshal does, when r.Time's year is outside 0-9999.
func encodeRecord(r ports.AuditRecord) ([]byte, error) {
	t, err := r.Time.UTC().MarshalJSON() // utcTime's MarshalJSON
	if err != nil {
		return nil, err
	}
	id := r.Identity
	b := make([]byte, 0, 160+len(r.Reason)+len(id.Origin)+len(id.Fingerprint)+len(id.Repository))
	b = append(append(append(b, `{"time":`...), t...), `,"action":`...)
	b = appendBstr(b, string(r.Action))
	b = appendBstr(append(b, `,"identity":{"serverId":`...), id.ServerID)
	b = appendBstr(append(b, `,"tier":`...), string(id.Tier))
	b = appendBstr(append(b, `,"origin":`...), id.Origin)
	b = appendBstr(append(b, `,"fingerprint":`...), id.Fingerprint)
	b = appendBstr(append(b, `,"security":`...), id.Security)
	b = appendBstr(append(b, `,"repository":`...), id.Repository)
	b = appendBstr(append(b, `,"generation":`...), id.Generation)
	b = appendBstr(append(b, `},"outcome":`...), r.Outcome)
	b = appendBstr(append(b, `,"reason":`...), r.Reason)
	b = appendBstr(append(b, `,"actor":`...), r.Actor)
	return append(b, "}\n"...), nil
}

// appendBstr appends s as bstr's MarshalJSON writes it: a string of
// printable ASCII that encoding/json writes unescaped ('"', '\\', '<',
// '>' and '&' excepted) is copied between quotes; any other goes through
// MarshalJSON itself.
func appendBstr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := bstr(s).MarshalJSON() // a string never fails to encode
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// decodeAudit parses the whole audit log; every line must be a record
// ending in a newline.
func decodeAudit(data []byte) ([]ports.AuditRecord, error) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, errors.New("torn last line")
	}
	var out []ports.AuditRecord
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		data = data[i+1:]
		var r fileRecord
		if err := strictDecode(line, &r); err != nil {
			return nil, err
		}
		out = append(out, ports.AuditRecord{
			Time:     time.Time(r.Time),
			Action:   ports.AuditAction(r.Action),
			Identity: r.Identity.identity(),
			Outcome:  string(r.Outcome),
			Reason:   string(r.Reason),
			Actor:    string(r.Actor),
		})
	}
	return out, nil
}

// acquire takes the in-process semaphore mu, or fails when ctx ends.
func acquire(ctx context.Context, mu chan struct{}) error {
	select {
	case mu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// withFileLock runs fn while holding a flock on the lock file name
// (exclusive or shared). A wait cut short by ctx, or a lock file that cannot
// be used, is ErrUnavailable (wrapping ctx.Err() in the first case).
func (s *Store) withFileLock(ctx context.Context, name string, exclusive bool, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("filestore: store lock wait: %w: %w", ports.ErrUnavailable, err)
	}
	f, err := s.openOrCreate(name, os.O_RDWR)
	if err != nil {
		return unavailable("cannot open store lock")
	}
	defer f.Close()
	if err := waitFlock(ctx, f, exclusive); err != nil {
		if errors.Is(err, errWaitEnded) {
			return fmt.Errorf("filestore: store lock wait: %w: %w", ports.ErrUnavailable, ctx.Err())
		}
		return unavailable("cannot take store lock")
	}
	defer funlock(f)
	return fn()
}

// readApprovals reads every approval: nil when the file is missing.
func (s *Store) readApprovals() ([]ports.Approval, error) {
	data, err := s.readStored(approvalsFile, maxApprovalsFile, "approvals file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, errTooLarge) {
		return nil, corrupt("approvals file too large")
	}
	if err != nil {
		return nil, err
	}
	list, err := decodeApprovals(data)
	if err != nil {
		return nil, corrupt("approvals file malformed")
	}
	return list, nil
}

// updateApprovals applies fn to the approvals under the approvals lock and
// writes the result atomically. A corrupt file is never rewritten.
func (s *Store) updateApprovals(ctx context.Context, fn func([]ports.Approval) ([]ports.Approval, error)) error {
	if err := acquire(ctx, s.approvalsMu); err != nil {
		return fmt.Errorf("filestore: store lock wait: %w: %w", ports.ErrUnavailable, err)
	}
	defer func() { <-s.approvalsMu }()
	return s.withFileLock(ctx, approvalsLock, true, func() error {
		list, err := s.readApprovals()
		if err != nil {
			return err
		}
		list, err = fn(list)
		if err != nil {
			return err
		}
		data, err := encodeApprovals(list)
		if err != nil {
			return unavailable("approval cannot be encoded")
		}
		return s.writeAtomic(approvalsFile, data, "approvals file")
	})
}

// List returns the approvals whose Identity.ServerID equals serverID, in the
// order they were granted (a re-grant counts as new), with GrantedAt in UTC;
// nil, nil when there is none. It returns ErrCorrupt when approvals.json
// cannot be read back, ErrUnavailable when the directory cannot be used.
// It takes no lock (approvals.json is replaced atomically); ctx is not
// consulted. Safe for concurrent use.
func (s *Store) List(_ context.Context, serverID string) ([]ports.Approval, error) {
	all, err := s.readApprovals()
	if err != nil {
		return nil, err
	}
	var out []ports.Approval
	for _, a := range all {
		if a.Identity.ServerID == serverID {
			out = append(out, a)
		}
	}
	return out, nil
}

// Grant adds a at the end, removing an approval with an identical Identity
// first. It returns ErrCorrupt when approvals.json cannot be read back (the
// file is left untouched), and ErrUnavailable when the directory cannot be
// written, when a.GrantedAt's year is outside 0-9999, or when ctx ends while
// waiting for the approvals lock (ctx.Err() is wrapped too). Safe for
// concurrent use across goroutines and processes: no grant or revoke is
// lost.
func (s *Store) Grant(ctx context.Context, a ports.Approval) error {
	return s.updateApprovals(ctx, func(list []ports.Approval) ([]ports.Approval, error) {
		list = slices.DeleteFunc(list, func(b ports.Approval) bool { return b.Identity == a.Identity })
		return append(list, a), nil
	})
}

// Revoke removes the approval whose Identity equals id exactly. It returns
// ErrNotFound when there is none, ErrCorrupt when approvals.json cannot be
// read back (the file is left untouched), and ErrUnavailable when the
// directory cannot be written or ctx ends while waiting for the approvals
// lock (ctx.Err() is wrapped too). Safe for concurrent use across goroutines
// and processes.
func (s *Store) Revoke(ctx context.Context, id ports.Identity) error {
	return s.updateApprovals(ctx, func(list []ports.Approval) ([]ports.Approval, error) {
		i := slices.IndexFunc(list, func(b ports.Approval) bool { return b.Identity == id })
		if i < 0 {
			return nil, fmt.Errorf("filestore: approval: %w", ports.ErrNotFound)
		}
		return slices.Delete(list, i, i+1), nil
	})
}

// Append adds r at the end of the audit log as one line and returns once
// it is fsynced. Concurrent Appends of one Store are written together:
// one write under the audit lock and one fsync for all the records that
// waited while the previous write was being synced, and each Append
// returns only after the fsync that covers its own record, with that
// write's outcome (a failed write or fsync fails every record of it). It
// appends even when an earlier line is corrupt (nothing is lost; a torn
// last line is ended first so r stays whole). It returns ErrUnavailable
// when the log cannot be written or synced, when r.Time's year is outside
// 0-9999, or when ctx ends while waiting for the audit lock (ctx.Err() is
// wrapped too; the Append that writes a group waits with its own ctx,
// and a record whose ctx ended while another Append was writing it may
// still be written).
// Safe for concurrent use across goroutines and processes: every record
// is kept whole.
func (s *Store) Append(ctx context.Context, r ports.AuditRecord) error {
	line, err := encodeRecord(r)
	if err != nil {
		return unavailable("audit record cannot be encoded")
	}
	return s.appendLine(ctx, line)
}

// Enqueue implements ports.AuditQueue: it takes r to be written after
// every record this Store appended or enqueued before it and returns
// without waiting. r goes out with the Store's next audit write (a later
// Append's, sharing its fsync, or the Store's own write at most 5ms after
// the first record that waits for one) and is durable once that write's
// fsync returns; Flush and Close wait for it. A crash (of the process or
// the machine) before then may lose r. It returns ErrUnavailable when r
// cannot be encoded (r.Time's year outside 0-9999) or the Store is
// closed; a failure of the write that carried r is reported by the next
// Flush. Safe for concurrent use.
func (s *Store) Enqueue(r ports.AuditRecord) error {
	line, err := encodeRecord(r)
	if err != nil {
		return unavailable("audit record cannot be encoded")
	}
	return s.enqueueDeferred(line)
}

// Flush implements ports.AuditQueue: it returns once every record
// enqueued on this Store before the call is durable. It returns
// ErrUnavailable when a write that carried an enqueued record failed
// since the last Flush (that record is lost: a failed write is not
// retried) or this one fails, or when ctx ends while waiting for the audit
// lock (ctx.Err() wrapped too). Safe for concurrent use.
func (s *Store) Flush(ctx context.Context) error {
	return s.flush(ctx)
}

// Records returns every audit record in append order, with times in UTC
// (nil, nil for an empty log). It returns ErrCorrupt and no records when any
// line cannot be decoded, and ErrUnavailable when the log cannot be read, is
// larger than 1 GiB, or ctx ends while waiting for the audit lock (ctx.Err()
// is wrapped too). Safe for concurrent use; it never sees a half-written
// record.
func (s *Store) Records(ctx context.Context) ([]ports.AuditRecord, error) {
	var out []ports.AuditRecord
	err := s.withFileLock(ctx, auditLock, false, func() error {
		data, err := s.readStored(auditFile, maxAuditFile, "audit log")
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if errors.Is(err, errTooLarge) {
			return unavailable("audit log too large to read")
		}
		if err != nil {
			return err
		}
		out, err = decodeAudit(data)
		if err != nil {
			return corrupt("audit log malformed")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
