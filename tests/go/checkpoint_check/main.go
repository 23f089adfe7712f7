// Command checkpoint_check checks a Ringvote log with Go's own implementations of the formats:
// golang.org/x/mod/sumdb/note for the signed checkpoint and sumdb/tlog for the tree, so that what
// tests/go_interop_test.ts serves is proven by code that is not ours.
//
// It reads one JSON request on stdin:
//
//	{"vkey": "<log vkey>", "cosigners": ["<cosignature/v1 vkey>", ...], "note": "<signed note>",
//	 "entries": ["<base64 block hash>", ...],
//	 "consistency": [{"old": m, "new": n, "oldRoot": "<b64>", "newRoot": "<b64>", "proof": [...]}],
//	 "inclusion": [{"index": i, "size": n, "leafHash": "<b64>", "root": "<b64>", "proof": [...]}]}
//
// and prints one line per check, "ok ..." or "FAIL ...", exiting 1 when any check fails (2 when
// the request cannot be read); among them, the time each verified cosignature/v1 line carries
// ("ok cosignature/v1 by <name>+<key ID> at time <POSIX seconds>"). The roots of the request are
// compared with the roots tlog computes from the entries, and every proof is checked against them
// with tlog.CheckTree and CheckRecord.
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Vkey        string   `json:"vkey"`
	Cosigners   []string `json:"cosigners"`
	Note        string   `json:"note"`
	Entries     [][]byte `json:"entries"`
	Consistency []struct {
		Old     int64       `json:"old"`
		New     int64       `json:"new"`
		OldRoot tlog.Hash   `json:"oldRoot"`
		NewRoot tlog.Hash   `json:"newRoot"`
		Proof   []tlog.Hash `json:"proof"`
	} `json:"consistency"`
	Inclusion []struct {
		Index    int64       `json:"index"`
		Size     int64       `json:"size"`
		LeafHash tlog.Hash   `json:"leafHash"`
		Root     tlog.Hash   `json:"root"`
		Proof    []tlog.Hash `json:"proof"`
	} `json:"inclusion"`
}

var failed bool

func report(ok bool, format string, args ...interface{}) {
	if ok {
		fmt.Printf("ok "+format+"\n", args...)
	} else {
		failed = true
		fmt.Printf("FAIL "+format+"\n", args...)
	}
}

// cosignatureV1 verifies tlog-cosignature v1.0.1 lines (type 0x04), which Go 1.19's note package
// does not know: 8 bytes of big-endian timestamp, then Ed25519 over
// "cosignature/v1\ntime <timestamp>\n" followed by the note text.
type cosignatureV1 struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v cosignatureV1) Name() string    { return v.name }
func (v cosignatureV1) KeyHash() uint32 { return v.hash }
func (v cosignatureV1) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig[:8])
	if t > math.MaxInt64 {
		return false
	}
	signed := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	return ed25519.Verify(v.key, signed, sig[8:])
}

func parseCosignerKey(vkey string) (cosignatureV1, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	id, b64, ok2 := strings.Cut(rest, "+")
	key, err := base64.StdEncoding.DecodeString(b64)
	if !ok1 || !ok2 || err != nil || len(key) != 33 || key[0] != 0x04 || len(id) != 8 {
		return cosignatureV1{}, fmt.Errorf("malformed cosigner vkey %q", vkey)
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), key...))
	hash := binary.BigEndian.Uint32(sum[:4])
	if fmt.Sprintf("%08x", hash) != id {
		return cosignatureV1{}, fmt.Errorf("cosigner vkey %q: key ID does not match", vkey)
	}
	return cosignatureV1{name: name, hash: hash, key: ed25519.PublicKey(key[1:])}, nil
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Println("FAIL request:", err)
		os.Exit(2)
	}

	// The note: every known key's line must verify (note.Open), the log's and each cosigner's.
	logKey, err := note.NewVerifier(req.Vkey)
	if err != nil {
		fmt.Println("FAIL vkey:", err)
		os.Exit(2)
	}
	verifiers := []note.Verifier{logKey}
	for _, vkey := range req.Cosigners {
		v, err := parseCosignerKey(vkey)
		if err != nil {
			fmt.Println("FAIL", err)
			os.Exit(2)
		}
		verifiers = append(verifiers, v)
	}
	n, err := note.Open([]byte(req.Note), note.VerifierList(verifiers...))
	report(err == nil, "note.Open: %v", err)
	if err != nil {
		os.Exit(1)
	}
	for _, v := range verifiers {
		signed := false
		for _, sig := range n.Sigs {
			signed = signed || sig.Name == v.Name() && sig.Hash == v.KeyHash()
		}
		report(signed, "signature by %s+%08x", v.Name(), v.KeyHash())
	}
	// Each cosignature/v1 line note.Open verified: the timestamp it carries, after the key ID.
	for _, v := range verifiers {
		c, ok := v.(cosignatureV1)
		if !ok {
			continue
		}
		for _, sig := range n.Sigs {
			if sig.Name != c.name || sig.Hash != c.hash {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(sig.Base64)
			if err != nil || len(raw) != 4+8+ed25519.SignatureSize {
				report(false, "cosignature/v1 by %s+%08x: not a key ID, a timestamp and a signature", c.name, c.hash)
				continue
			}
			report(true, "cosignature/v1 by %s+%08x at time %d", c.name, c.hash, binary.BigEndian.Uint64(raw[4:12]))
		}
	}

	// The checkpoint body (c2sp.org/tlog-checkpoint): origin, size, root, then extension lines.
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		report(false, "checkpoint: fewer than three lines")
		os.Exit(1)
	}
	size, errSize := strconv.ParseInt(lines[1], 10, 64)
	root, errRoot := tlog.ParseHash(lines[2])
	report(lines[0] == logKey.Name(), "checkpoint origin %q is the key name", lines[0])
	report(errSize == nil && size >= 0 && strconv.FormatInt(size, 10) == lines[1], "checkpoint size %q", lines[1])
	report(errRoot == nil, "checkpoint root %q", lines[2])

	// The tree of the entries, computed by tlog: its stored hashes, then any size's root.
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, index := range indexes {
			if index >= int64(len(stored)) {
				return nil, fmt.Errorf("no stored hash %d", index)
			}
			out[i] = stored[index]
		}
		return out, nil
	})
	for i, entry := range req.Entries {
		hashes, err := tlog.StoredHashes(int64(i), entry, reader)
		if err != nil {
			report(false, "entry %d: %v", i, err)
			os.Exit(1)
		}
		stored = append(stored, hashes...)
	}
	treeHash := func(size int64) (tlog.Hash, error) {
		if size > int64(len(req.Entries)) {
			return tlog.Hash{}, fmt.Errorf("only %d entries", len(req.Entries))
		}
		if size == 0 {
			// tlog answers a zero hash for the empty tree; RFC 9162 §2.1.1 says SHA-256("").
			return tlog.Hash(sha256.Sum256(nil)), nil
		}
		return tlog.TreeHash(size, reader)
	}
	computed, err := treeHash(size)
	report(err == nil && size == int64(len(req.Entries)) && computed == root,
		"checkpoint root is tlog's root of the %d entries (size %d)", len(req.Entries), size)

	for _, c := range req.Consistency {
		oldRoot, err1 := treeHash(c.Old)
		newRoot, err2 := treeHash(c.New)
		report(err1 == nil && err2 == nil && oldRoot == c.OldRoot && newRoot == c.NewRoot,
			"consistency %d -> %d: roots are tlog's", c.Old, c.New)
		if c.Old == 0 {
			report(len(c.Proof) == 0, "consistency 0 -> %d: empty proof", c.New)
			continue
		}
		err := tlog.CheckTree(tlog.TreeProof(c.Proof), c.New, c.NewRoot, c.Old, c.OldRoot)
		report(err == nil, "consistency %d -> %d: tlog.CheckTree: %v", c.Old, c.New, err)
	}

	for _, p := range req.Inclusion {
		if p.Index < 0 || p.Index >= int64(len(req.Entries)) {
			report(false, "inclusion %d in %d: no such entry", p.Index, p.Size)
			continue
		}
		leaf := tlog.RecordHash(req.Entries[p.Index])
		report(leaf == p.LeafHash, "inclusion %d in %d: tlog.RecordHash of the entry is the leaf hash", p.Index, p.Size)
		root, err := treeHash(p.Size)
		report(err == nil && root == p.Root, "inclusion %d in %d: root is tlog's", p.Index, p.Size)
		err = tlog.CheckRecord(tlog.RecordProof(p.Proof), p.Size, p.Root, p.Index, leaf)
		report(err == nil, "inclusion %d in %d: tlog.CheckRecord: %v", p.Index, p.Size, err)
	}

	if failed {
		os.Exit(1)
	}
}
