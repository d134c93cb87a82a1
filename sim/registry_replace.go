package sim

// ReplaceSubject registers info under its name, replacing a subject of the
// same name if any. A test that defines its subject inline (cachelabtest)
// registers it each time it runs (go test -count=2 runs it twice);
// RegisterSubject, for subjects registered once from init, panics on a
// duplicate instead.
func ReplaceSubject(info SubjectInfo) error {
	if info.Name == "" || info.New == nil {
		return errMissingSubjectFields
	}
	registry.Lock()
	defer registry.Unlock()
	registry.byName[info.Name] = info
	return nil
}

type subjectError string

func (e subjectError) Error() string { return string(e) }

const errMissingSubjectFields = subjectError("sim: a subject needs a Name and a New factory")
