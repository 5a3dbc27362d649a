package storage

// Service names used in Stats.
const (
	ServiceQueue = "queue"
	ServiceBlob  = "blob"
	ServiceTable = "table"
)

// OpStat counts one billed operation kind.
type OpStat struct {
	Service   string `json:"service"`
	Operation string `json:"operation"`
	// Category is the caller's label from WithCategory; empty if none.
	Category string `json:"category,omitempty"`
	Count    int64  `json:"count"`
}

// PlyStat counts the transactions made for one ply: by the handling of
// that ply's messages (see WithPly).
type PlyStat struct {
	Ply int `json:"ply"`
	// Ops counts them by operation, named as Operation.String does
	// ("blob.get"): compact, since a run's statistics are kept in one
	// table property.
	Ops map[string]int64 `json:"ops"`
	// EntityReads counts the table entities those calls read: the
	// entities each Get and each page of a Query returned.
	EntityReads int64 `json:"entity_reads,omitempty"`
	// Tasks counts the handlings of the ply's messages (WithHandling), a
	// redelivery's included; the MaxTask fields are the most that one
	// handling cost: its transactions (a handler's reruns and its
	// message's lease and delete included), the table entities it read,
	// and the seconds from its start to its last storage call.
	Tasks               int64   `json:"tasks,omitempty"`
	MaxTaskTransactions int64   `json:"max_task_transactions,omitempty"`
	MaxTaskEntities     int64   `json:"max_task_entities,omitempty"`
	MaxTaskSeconds      float64 `json:"max_task_seconds,omitempty"`
	// ByKind splits the handlings by the kind of message handled: what
	// they cost in all and the most one of them cost, to say which kind
	// of handling grows with the items and where the ply's reads went.
	ByKind map[string]KindStat `json:"by_kind,omitempty"`
}

// KindStat is what the handlings of one kind of message of one ply cost:
// how many there were, their transactions and the table entities they
// read in all, and the most one of them made and read.
type KindStat struct {
	Handlings       int64 `json:"handlings"`
	Transactions    int64 `json:"transactions"`
	EntityReads     int64 `json:"entity_reads"`
	MaxTransactions int64 `json:"max_transactions"`
	MaxEntities     int64 `json:"max_entities"`
}

// add returns k with sign times o's totals added, and, when sign is 1,
// the larger of the two maxima.
func (k KindStat) add(o KindStat, sign int64) KindStat {
	k.Handlings += sign * o.Handlings
	k.Transactions += sign * o.Transactions
	k.EntityReads += sign * o.EntityReads
	if sign == 1 {
		k.MaxTransactions = max(k.MaxTransactions, o.MaxTransactions)
		k.MaxEntities = max(k.MaxEntities, o.MaxEntities)
	}
	return k
}

// Total is the number of the ply's transactions.
func (p PlyStat) Total() int64 {
	var n int64
	for _, c := range p.Ops {
		n += c
	}
	return n
}

// Stats is a snapshot of billed transactions and bytes moved, as Azure
// would bill them: one transaction per request, including each page of a
// query or listing, each staged block, and each entity group transaction.
type Stats struct {
	Ops []OpStat `json:"ops"`
	// Plies splits the transactions made for a ply by ply, in ply order;
	// the rest (Unattributed) were made for no ply.
	Plies        []PlyStat `json:"plies,omitempty"`
	BytesWritten int64     `json:"bytes_written"`
	BytesRead    int64     `json:"bytes_read"`
}

// Total is the number of billed transactions.
func (s Stats) Total() int64 {
	var n int64
	for _, o := range s.Ops {
		n += o.Count
	}
	return n
}

// Unattributed is the number of transactions made for no ply: polling
// the queue, settling messages, seeding, reading the run.
func (s Stats) Unattributed() int64 {
	n := s.Total()
	for _, p := range s.Plies {
		n -= p.Total()
	}
	return n
}

// ByService sums transactions per service.
func (s Stats) ByService() map[string]int64 {
	m := map[string]int64{}
	for _, o := range s.Ops {
		m[o.Service] += o.Count
	}
	return m
}
