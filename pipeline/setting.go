package pipeline

import "fmt"

// A Setting names a field of a RunConfig in the errors of Validate, so
// that a command can say which of its flags was wrong (cli maps them)
// and other callers still read what the value was.
type Setting string

// The settings Validate checks, and the start and -solve, which it
// takes as they are.
const (
	SettingBoard              Setting = "board"
	SettingTarget             Setting = "target ply"
	SettingBlobPositions      Setting = "blob positions"
	SettingBucketBlobs        Setting = "bucket blobs"
	SettingGrowFrom           Setting = "grow from ply"
	SettingMergeFanIn         Setting = "merge fan-in"
	SettingQueueShards        Setting = "queue shards"
	SettingCompletion         Setting = "completion"
	SettingMessages           Setting = "messages"
	SettingCompensationShards Setting = "compensation queue shards"
	SettingPartitionShards    Setting = "partition shards"
	SettingAccounts           Setting = "storage accounts"
	SettingStateAccounts      Setting = "state accounts"
	SettingSolvePositions     Setting = "solve positions"
	SettingSolveMode          Setting = "solve mode"
	SettingStart              Setting = "start position"
	SettingSolve              Setting = "solve"
)

// A SettingError is a setting whose value Validate refuses: it reads
// "blob positions 0: must be 1 to 4194304".
type SettingError struct {
	Setting Setting
	Value   string // as given, formatted
	Rule    string // what the value must be
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Setting, e.Value, e.Rule)
}

// settingErrorf returns a SettingError for the value v of s, its rule
// formatted from format and args.
func settingErrorf(s Setting, v any, format string, args ...any) error {
	return &SettingError{Setting: s, Value: fmt.Sprint(v), Rule: fmt.Sprintf(format, args...)}
}
