// An Oblivious HTTP client (RFC 9458) that shares no code with Ringvote: HPKE from Cloudflare's
// circl, HKDF from golang.org/x/crypto, AES-GCM from Go's standard library, and its own Binary
// HTTP (RFC 9292, known-length) encoder and decoder. It reads a JSON job on stdin: the relay's
// URL, the key configuration list (base64), the gateway's scheme and authority, and calls; each
// call is encapsulated, posted to the relay, and its answer opened. It prints one JSON line per
// call: the relay's status, and the inner status and body when the answer opened.
package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/cloudflare/circl/hpke"
	"golang.org/x/crypto/hkdf"
)

type call struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body"`
	PadTo  int    `json:"padTo"`
	Tamper bool   `json:"tamper"`
}

type job struct {
	Relay     string `json:"relay"`
	Keys      string `json:"keys"`
	Scheme    string `json:"scheme"`
	Authority string `json:"authority"`
	Calls     []call `json:"calls"`
}

type result struct {
	Relay  int    `json:"relay"`
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	Length int    `json:"length,omitempty"`
	Error  string `json:"error,omitempty"`
}

func varint(n int) []byte {
	switch {
	case n < 0x40:
		return []byte{byte(n)}
	case n < 0x4000:
		return []byte{byte(n>>8) | 0x40, byte(n)}
	default:
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, uint32(n)|0x80000000)
		return b
	}
}

func prefixed(b []byte) []byte { return append(varint(len(b)), b...) }

func readVarint(r *bytes.Reader) (int, error) {
	first, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	n := int(first & 0x3f)
	for i := 1; i < 1<<(first>>6); i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		n = n<<8 | int(b)
	}
	return n, nil
}

func readPrefixed(r *bytes.Reader) ([]byte, error) {
	n, err := readVarint(r)
	if err != nil {
		return nil, err
	}
	if n > r.Len() {
		return nil, errors.New("field longer than the message")
	}
	out := make([]byte, n)
	_, err = io.ReadFull(r, out)
	return out, err
}

// request is a known-length Binary HTTP request padded with zeros to a multiple of 1,024 bytes.
func request(j job, c call) []byte {
	var m []byte
	m = append(m, varint(0)...)
	for _, s := range []string{c.Method, j.Scheme, j.Authority, c.Path} {
		m = append(m, prefixed([]byte(s))...)
	}
	var fields []byte
	if c.Method == "POST" {
		fields = append(prefixed([]byte("content-type")), prefixed([]byte("application/json"))...)
	}
	m = append(m, prefixed(fields)...)
	m = append(m, prefixed([]byte(c.Body))...)
	m = append(m, varint(0)...)
	size := (len(m) + 1023) / 1024 * 1024
	if c.PadTo > size {
		size = c.PadTo
	}
	return append(m, make([]byte, size-len(m))...)
}

// response decodes a known-length Binary HTTP response: its status and content.
func response(b []byte) (int, []byte, error) {
	r := bytes.NewReader(b)
	if f, err := readVarint(r); err != nil || f != 1 {
		return 0, nil, errors.New("not a known-length response")
	}
	status, err := readVarint(r)
	if err != nil {
		return 0, nil, err
	}
	if _, err := readPrefixed(r); err != nil {
		return status, nil, nil
	}
	content, err := readPrefixed(r)
	if err != nil {
		return status, nil, nil
	}
	return status, content, nil
}

func run(j job, c call, keyID byte, pkR []byte) result {
	suite := hpke.NewSuite(hpke.KEM_X25519_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_AES128GCM)
	pk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(pkR)
	if err != nil {
		return result{Error: err.Error()}
	}
	hdr := []byte{keyID, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01}
	info := append(append([]byte("message/bhttp request"), 0), hdr...)
	sender, err := suite.NewSender(pk, info)
	if err != nil {
		return result{Error: err.Error()}
	}
	enc, sealer, err := sender.Setup(rand.Reader)
	if err != nil {
		return result{Error: err.Error()}
	}
	ct, err := sealer.Seal(request(j, c), nil)
	if err != nil {
		return result{Error: err.Error()}
	}
	body := append(append(append([]byte{}, hdr...), enc...), ct...)
	if c.Tamper {
		body[len(body)-5] ^= 0x01
	}
	res, err := http.Post(j.Relay, "message/ohttp-req", bytes.NewReader(body))
	if err != nil {
		return result{Error: err.Error()}
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return result{Relay: res.StatusCode, Body: string(answer)}
	}
	secret := sealer.Export([]byte("message/bhttp response"), 16)
	if len(answer) < 16 {
		return result{Relay: 200, Error: "short response"}
	}
	nonce := answer[:16]
	prk := hkdf.Extract(sha256.New, secret, append(append([]byte{}, enc...), nonce...))
	key := make([]byte, 16)
	iv := make([]byte, 12)
	io.ReadFull(hkdf.Expand(sha256.New, prk, []byte("key")), key)
	io.ReadFull(hkdf.Expand(sha256.New, prk, []byte("nonce")), iv)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, iv, answer[16:], nil)
	if err != nil {
		return result{Relay: 200, Error: "response does not open"}
	}
	status, content, err := response(plain)
	if err != nil {
		return result{Relay: 200, Error: err.Error()}
	}
	return result{Relay: 200, Status: status, Body: string(content), Length: len(plain)}
}

func main() {
	var j job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	keys, err := base64.StdEncoding.DecodeString(j.Keys)
	// One configuration: 2-byte length, key id, KEM id, 32-byte public key, suites.
	if err != nil || len(keys) < 2+3+32 || keys[3] != 0x00 || keys[4] != 0x20 {
		fmt.Fprintln(os.Stderr, "not an X25519 key configuration list")
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	for _, c := range j.Calls {
		out.Encode(run(j, c, keys[2], keys[5:37]))
	}
}
