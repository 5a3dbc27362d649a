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

// Stats is a snapshot of billed transactions and bytes moved, as Azure
// would bill them: one transaction per request, including each page of a
// query or listing, each staged block, and each entity group transaction.
type Stats struct {
	Ops          []OpStat `json:"ops"`
	BytesWritten int64    `json:"bytes_written"`
	BytesRead    int64    `json:"bytes_read"`
}

// Total is the number of billed transactions.
func (s Stats) Total() int64 {
	var n int64
	for _, o := range s.Ops {
		n += o.Count
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
