package runstore

// Placement spreads a run over Accounts storage accounts (see
// storage/spread): the run's blob data by a stable function of the key
// range each blob covers, so that every account holds a fair share of
// every ply; control blobs on account 0. Every process of a run must use the same Placement. Accounts
// of 1 or less put everything on account 0.
type Placement struct{ Accounts int }

// Blob returns the account of the run's blob name: a final blob by its
// bucket, a results blob by its final blob's index, an expansion blob by
// its task, a combined run by its combine task, each shifted by the ply so that plies of one bucket do not
// all start on account 0. The start, the splitters, the merge and combine inputs and
// any name outside the run's layout go to account 0.
func (p Placement) Blob(name string) int {
	if p.Accounts <= 1 {
		return 0
	}
	b, ok := ParseBlobName(name)
	if !ok {
		return 0
	}
	var slot int
	switch b.Kind {
	case FinalRunBlob:
		slot, ok = number(name, bucketWidth) // FinalRunBlobName's bucket
	case ExpansionBlob, CombineBlob:
		slot, ok = number(name, indexWidth) // the task of ExpansionBlobName, CombineBlobName
	case ResultsBlob:
		slot = b.Index
	default:
		return 0
	}
	if !ok {
		return 0
	}
	return (b.Ply + slot%p.Accounts) % p.Accounts
}

// number reads the index (keys.go) after the kind ("e-", two
// characters) in the ply folder of name, as the blob name functions
// write it.
func number(name string, width int) (int, bool) {
	n, _, ok := cutIndex(name[len(PlyFolder(0))+len("e-"):], width)
	return n, ok
}
