package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"
)

// QueryAll reads every entity of partition pk in [opts.From, opts.To),
// following continuation tokens from opts.Continuation on. opts.Limit is
// the page size, not a cap on the result.
func QueryAll(ctx context.Context, t Table, pk string, opts QueryOptions) ([]Entity, error) {
	var all []Entity
	for {
		p, err := t.Query(ctx, pk, opts)
		if err != nil {
			return all, fmt.Errorf("query table %s partition %q: %w", t.Name(), pk, err)
		}
		all = append(all, p.Entities...)
		// Azure may hand back a short or even empty page with a token (a
		// server-side time limit), so only an empty token ends the scan.
		if p.Next == "" {
			return all, nil
		}
		opts.Continuation = p.Next
	}
}

// Errors of the typed property getters.
var (
	// ErrNoProperty: the entity has no property of that name.
	ErrNoProperty = errors.New("storage: no such property")
	// ErrPropertyType: the property holds a value of another type.
	ErrPropertyType = errors.New("storage: property has another type")
)

func prop[T any](e Entity, name, want string) (T, error) {
	var zero T
	v, ok := e.Props[name]
	if !ok {
		return zero, fmt.Errorf("%w: entity (%q, %q) has no %q", ErrNoProperty, e.PartitionKey, e.RowKey, name)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: entity (%q, %q) property %q is %T, want %s", ErrPropertyType, e.PartitionKey, e.RowKey, name, v, want)
	}
	return t, nil
}

// PropString returns the string property name of e.
func PropString(e Entity, name string) (string, error) { return prop[string](e, name, "string") }

// PropInt64 returns the int64 property name of e.
func PropInt64(e Entity, name string) (int64, error) { return prop[int64](e, name, "int64") }

// PropBool returns the bool property name of e.
func PropBool(e Entity, name string) (bool, error) { return prop[bool](e, name, "bool") }

// PropBytes returns the binary property name of e. The slice is e's own.
func PropBytes(e Entity, name string) ([]byte, error) { return prop[[]byte](e, name, "[]byte") }

// ValidMessage checks an Enqueue against Azure's rules: text up to
// MaxMessageBytes, a delay of 0 to MaxVisibility that ends before the
// message expires, and a time to live of at least a second (Azure counts
// it in whole seconds) unless zero (the default) or negative (never).
func ValidMessage(text string, opts EnqueueOptions) error {
	if len(text) > MaxMessageBytes {
		return fmt.Errorf("%w: message of %d bytes exceeds %d", ErrInvalid, len(text), MaxMessageBytes)
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: message text is not valid UTF-8", ErrInvalid)
	}
	for _, r := range text {
		if !(r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000) {
			return fmt.Errorf("%w: message text holds %U, which XML cannot carry", ErrInvalid, r)
		}
	}
	if opts.Delay < 0 || opts.Delay > MaxVisibility {
		return fmt.Errorf("%w: message delay %v is outside 0 to %v", ErrInvalid, opts.Delay, MaxVisibility)
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = DefaultMessageTTL
	}
	if ttl > 0 && ttl < time.Second {
		return fmt.Errorf("%w: message time to live %v is under a second", ErrInvalid, opts.TTL)
	}
	if ttl > 0 && opts.Delay >= ttl {
		return fmt.Errorf("%w: message delay %v does not end before its time to live %v", ErrInvalid, opts.Delay, ttl)
	}
	return nil
}

// DefaultMessageTTL is the time to live of a message enqueued with a zero TTL.
const DefaultMessageTTL = 7 * 24 * time.Hour

// ValidDequeue checks a Dequeue: 1 to MaxDequeue messages, hidden for 1
// second (Azure's minimum) to MaxVisibility.
func ValidDequeue(max int, visibility time.Duration) error {
	if max < 1 || max > MaxDequeue {
		return fmt.Errorf("%w: dequeue of %d messages is outside 1 to %d", ErrInvalid, max, MaxDequeue)
	}
	if visibility < time.Second || visibility > MaxVisibility {
		return fmt.Errorf("%w: visibility timeout %v is outside 1s to %v", ErrInvalid, visibility, MaxVisibility)
	}
	return nil
}

// ValidPeek checks the message count of a Peek: 1 to MaxDequeue.
func ValidPeek(max int) error {
	if max < 1 || max > MaxDequeue {
		return fmt.Errorf("%w: peek of %d messages is outside 1 to %d", ErrInvalid, max, MaxDequeue)
	}
	return nil
}

// ValidVisibility checks the timeout of UpdateVisibility: 0 to MaxVisibility.
func ValidVisibility(visibility time.Duration) error {
	if visibility < 0 || visibility > MaxVisibility {
		return fmt.Errorf("%w: visibility timeout %v is outside 0 to %v", ErrInvalid, visibility, MaxVisibility)
	}
	return nil
}

// ValidReceipt checks the message a call names: an ID of 1 to 256 bytes
// and a pop receipt of 1 to 1024, as Azure accepts them.
func ValidReceipt(id, popReceipt string) error {
	if id == "" || len(id) > 256 {
		return fmt.Errorf("%w: message ID must be 1 to 256 bytes", ErrInvalid)
	}
	if popReceipt == "" || len(popReceipt) > 1024 {
		return fmt.Errorf("%w: pop receipt must be 1 to 1024 bytes", ErrInvalid)
	}
	return nil
}

// MaxPropertyNameLen is the longest property name Azure accepts, in characters.
const MaxPropertyNameLen = 255

// ValidPropertyName checks a property name: 1 to 255 characters forming a
// C# identifier (Azure's rule), and not a system property.
func ValidPropertyName(name string) error {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
		return fmt.Errorf("%w: property name %q is reserved", ErrInvalid, name)
	}
	if name == "" || utf8.RuneCountInString(name) > MaxPropertyNameLen {
		return fmt.Errorf("%w: property name %q must be 1 to %d characters", ErrInvalid, name, MaxPropertyNameLen)
	}
	for i, r := range name {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return fmt.Errorf("%w: property name %q is not an identifier", ErrInvalid, name)
		}
	}
	return nil
}

// ValidEntity checks an entity against Azure's rules: valid keys; at most
// MaxProperties properties with valid names and values of type string,
// int64, bool or []byte only; strings and binaries of at most
// MaxPropertyBytes (strings measured in UTF-16, as Azure stores them);
// and at most MaxEntityBytes in all, by EntitySize.
func ValidEntity(e Entity) error {
	if err := ValidKey(e.PartitionKey); err != nil {
		return fmt.Errorf("partition key: %w", err)
	}
	if err := ValidKey(e.RowKey); err != nil {
		return fmt.Errorf("row key: %w", err)
	}
	if len(e.Props) > MaxProperties {
		return fmt.Errorf("%w: entity (%q, %q) has %d properties, over %d", ErrInvalid, e.PartitionKey, e.RowKey, len(e.Props), MaxProperties)
	}
	for name, v := range e.Props {
		if err := ValidPropertyName(name); err != nil {
			return err
		}
		switch v := v.(type) {
		case string:
			// Azure stores strings as UTF-16: 64 KiB is 32K characters.
			if n := 2 * utf16Len(v); n > MaxPropertyBytes {
				return fmt.Errorf("%w: string property %q is %d bytes in UTF-16, over %d", ErrInvalid, name, n, MaxPropertyBytes)
			}
			if !utf8.ValidString(v) {
				return fmt.Errorf("%w: string property %q is not valid UTF-8", ErrInvalid, name)
			}
		case []byte:
			if len(v) > MaxPropertyBytes {
				return fmt.Errorf("%w: binary property %q is %d bytes, over %d", ErrInvalid, name, len(v), MaxPropertyBytes)
			}
		case int64, bool:
		default:
			return fmt.Errorf("%w: property %q is a %T; only string, int64, bool and []byte are stored", ErrInvalid, name, v)
		}
	}
	if n := EntitySize(e); n > MaxEntityBytes {
		return fmt.Errorf("%w: entity (%q, %q) is %d bytes, over %d", ErrInvalid, e.PartitionKey, e.RowKey, n, MaxEntityBytes)
	}
	return nil
}

// EntitySize is the size Azure charges an entity against MaxEntityBytes:
// 4 bytes, plus the keys in UTF-16, plus for each property 8 bytes, its
// name in UTF-16 and its value (strings in UTF-16 plus 4, binaries plus 4).
func EntitySize(e Entity) int {
	n := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	for name, v := range e.Props {
		n += 8 + 2*utf16Len(name)
		switch v := v.(type) {
		case string:
			n += 4 + 2*utf16Len(v)
		case []byte:
			n += 4 + len(v)
		case int64:
			n += 8
		case bool:
			n++
		}
	}
	return n
}

// utf16Len counts the UTF-16 code units of s.
func utf16Len(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
		case c >= 0xF0: // lead of a four-byte sequence, a surrogate pair: 4-3+1 = 2 units
			n++
		case c >= 0xC0: // lead of a two- or three-byte sequence: one unit in all
		default: // continuation byte
			n--
		}
	}
	return n
}

// ValidETag checks the ETag of an Update or Delete. An empty ETag is
// refused: Azure would treat a request without If-Match as an
// unconditional write, which is what Upsert and AnyETag are for.
func ValidETag(etag string) error {
	if etag == "" {
		return fmt.Errorf("%w: empty ETag; use AnyETag to match any entity", ErrInvalid)
	}
	return nil
}

// ValidOp checks one table write as Azure would, alone or in a
// transaction: for OpAdd, OpUpsert and OpUpdate a valid entity, for
// OpDelete valid keys, for OpUpdate and OpDelete an ETag, and a known kind.
func ValidOp(op Op) error {
	e := op.Entity
	switch op.Kind {
	case OpAdd, OpUpsert:
		return ValidEntity(e)
	case OpUpdate:
		if err := ValidEntity(e); err != nil {
			return err
		}
	case OpDelete:
		if err := ValidKey(e.PartitionKey); err != nil {
			return fmt.Errorf("partition key: %w", err)
		}
		if err := ValidKey(e.RowKey); err != nil {
			return fmt.Errorf("row key: %w", err)
		}
	default:
		return fmt.Errorf("%w: unknown operation kind %d", ErrInvalid, op.Kind)
	}
	return ValidETag(op.ETag)
}

// ValidTransaction checks an entity group transaction client-side, as Azure
// would (or should: Azurite lets some through) reject it: 1 to MaxBatchOps
// operations, all on partition pk, no row key twice, each operation valid
// by ValidOp, and a BatchSize within MaxBatchBytes. A fault in one
// operation is reported as a *TxError with its index.
func ValidTransaction(pk string, ops []Op) error {
	if len(ops) < 1 || len(ops) > MaxBatchOps {
		return fmt.Errorf("%w: transaction of %d operations is outside 1 to %d", ErrInvalid, len(ops), MaxBatchOps)
	}
	if err := ValidKey(pk); err != nil {
		return fmt.Errorf("transaction partition key: %w", err)
	}
	// Small batches (single writes, above all) look for a repeated row
	// key by scanning, which is cheaper than building a set.
	var seen map[string]struct{}
	if len(ops) > 8 {
		seen = make(map[string]struct{}, len(ops))
	}
	for i, op := range ops {
		e := op.Entity
		if e.PartitionKey != pk {
			return &TxError{Index: i, Err: fmt.Errorf("%w: partition key %q in a transaction on %q", ErrInvalid, e.PartitionKey, pk)}
		}
		dup := false
		if seen != nil {
			_, dup = seen[e.RowKey]
			seen[e.RowKey] = struct{}{}
		} else {
			for _, prev := range ops[:i] {
				dup = dup || prev.Entity.RowKey == e.RowKey
			}
		}
		if dup {
			return &TxError{Index: i, Err: fmt.Errorf("%w: row key %q appears twice in one transaction", ErrInvalid, e.RowKey)}
		}
		if err := ValidOp(op); err != nil {
			return &TxError{Index: i, Err: err}
		}
	}
	if n := BatchSize(ops); n > MaxBatchBytes {
		return fmt.Errorf("%w: transaction of %d bytes by BatchSize exceeds %d", ErrInvalid, n, MaxBatchBytes)
	}
	return nil
}

// Allowances of BatchSize for what does not depend on the operations.
const (
	// batchFrameBytes covers the batch's own multipart framing: its
	// boundary lines, the changeset header and the closing boundaries.
	batchFrameBytes = 512
	// batchOpFrameBytes covers one operation's part headers, request line
	// (with the $format query the Azure tables SDK adds to some) and HTTP
	// headers (the ETag aside), the entity's JSON punctuation, and a
	// service endpoint and table name of up to 160 bytes together.
	batchOpFrameBytes = 640
)

// BatchSize is the size charged against MaxBatchBytes: a bound on the body
// of the $batch request that carries ops. It counts what each operation
// adds to the multipart body (part and HTTP headers, the request line with
// the keys percent-encoded as OData literals, the ETag, and the entity as
// JSON with binaries in base64 and int64 values as annotated strings),
// allowing for a service endpoint and table name of up to 160 bytes.
// Backends refuse a transaction over MaxBatchBytes by this measure,
// whatever their own encoding.
func BatchSize(ops []Op) int {
	n := batchFrameBytes
	for _, op := range ops {
		n += batchOpBytes(op)
	}
	return n
}

// batchOpBytes bounds what one operation adds to the body of a batch.
func batchOpBytes(op Op) int {
	e := op.Entity
	n := batchOpFrameBytes + urlKeyLen(e.PartitionKey) + urlKeyLen(e.RowKey) + len(op.ETag)
	if op.Kind == OpDelete {
		return n
	}
	n += jsonStringLen(e.PartitionKey) + jsonStringLen(e.RowKey)
	for name, v := range e.Props {
		// A property costs its name twice (with "@odata.type" for the
		// annotated types), quotes, colons, commas and the type name.
		n += 2*len(name) + 40
		switch v := v.(type) {
		case string:
			n += jsonStringLen(v)
		case []byte:
			n += (len(v) + 2) / 3 * 4
		case int64:
			n += 22
		case bool:
			n += 5
		}
	}
	return n
}

// urlKeyLen bounds the length of key as an OData string literal in a URL:
// quotes doubled, then everything but unreserved characters percent-encoded.
func urlKeyLen(key string) int {
	n := 2 // the enclosing quotes
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~':
			n++
		case c == '\'':
			n += 6 // '' percent-encoded
		default:
			n += 3
		}
	}
	return n
}

// jsonStringLen bounds the length of s as a JSON string, quotes included,
// as an encoder that escapes for HTML writes it: control characters, <, >
// and & become six-character escapes, and so do U+2028 and U+2029, whose
// three bytes all start with 0xE2.
func jsonStringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == 0xE2 {
			n += 5
		}
	}
	return n
}

// Sleep waits for d, or until ctx is done: then it returns ctx's error.
// Retry loops wait with it, so that a stopping worker does not sit out a
// backoff.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// BlobReaderAt reads blob name of c at any offset, one ranged read per
// ReadAt: for formats that keep an index at the end of a blob, or a
// table of offsets at its start.
func BlobReaderAt(ctx context.Context, c Container, name string) io.ReaderAt {
	return blobAt{ctx: ctx, c: c, name: name}
}

type blobAt struct {
	ctx  context.Context
	c    Container
	name string
}

func (b blobAt) ReadAt(p []byte, off int64) (int, error) {
	rc, err := b.c.Open(b.ctx, b.name, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.ReadFull(rc, p)
}

// DeleteBlob deletes blob name from c; a blob already gone is no error,
// since every deleter of spent or orphaned blobs may race another.
func DeleteBlob(ctx context.Context, c Container, name string) error {
	if err := c.Delete(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}
