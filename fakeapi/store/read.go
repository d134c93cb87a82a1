package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The messages kube-apiserver's etcd3 store answers expired lists with
// (k8s.io/apiserver/pkg/storage/etcd3/errors.go).
const (
	msgListExpired     = "The resourceVersion for the provided list is too old."
	msgContinueExpired = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// tooLargeResourceVersion is kube-apiserver's
// storage.NewTooLargeResourceVersionError (retry after 1 s, as the watch
// cache says): a 504 Timeout with cause ResourceVersionTooLarge, which
// client-go's reflector recognises.
func tooLargeResourceVersion(requested, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// tooOldResourceVersion is the watch cache's 410 for a watch below the
// compacted revision.
func tooOldResourceVersion(requested, compacted int64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, compacted))
}

// item is one object of a snapshot, encoded.
type item struct {
	key  string
	data []byte
}

// snapshotAt returns the objects of r in namespace ns ("" for all) as they
// were at revision at (compacted <= at <= rv), sorted by key. The result is
// valid until the next write.
func (s *Store) snapshotAt(r *resState, ns string, at int64) []item {
	cur := r.sortedItems()
	lo, hi := 0, len(cur)
	if r.Namespaced && ns != "" {
		lo = sort.Search(len(cur), func(i int) bool { return cur[i].key >= ns+"/" })
		hi = sort.Search(len(cur), func(i int) bool { return cur[i].key >= ns+"0" }) // '0' follows '/'
	}
	if at == s.rv {
		return cur[lo:hi:hi]
	}
	inNS := func(key string) bool { return !r.Namespaced || ns == "" || strings.HasPrefix(key, ns+"/") }
	// overrides: the state at `at` of every key written after it.
	overrides := map[string][]byte{}
	{
		for i := int(at - s.compacted); i < len(s.hist); i++ {
			h := &s.hist[i]
			if _, seen := overrides[h.key]; !seen && h.res == r && inNS(h.key) {
				overrides[h.key] = h.prev // the state before the first write after at
			}
		}
	}
	out := make([]item, 0, hi-lo)
	for _, it := range cur[lo:hi] {
		if o, ok := overrides[it.key]; ok {
			if o != nil {
				out = append(out, item{it.key, o})
			}
			continue
		}
		out = append(out, it)
	}
	var extra []item
	for k, o := range overrides {
		if _, cur := r.objects[k]; !cur && o != nil {
			extra = append(extra, item{k, o})
		}
	}
	if len(extra) > 0 {
		out = append(out, extra...)
		sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	}
	return out
}

// parseListOptions converts and validates ListOptions as kube-apiserver's
// handler does (400 on a parse error, 422 on invalid options).
func parseListOptions(opts metav1.ListOptions, isWatch bool) (metainternalversion.ListOptions, error) {
	var in metainternalversion.ListOptions
	o := opts
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&o, &in, nil); err != nil {
		return in, apierrors.NewBadRequest(err.Error())
	}
	in.Watch = isWatch
	metainternalversion.SetListOptionsDefaults(&in, true)
	if errs := metainternalversionvalidation.ValidateListOptions(&in, true); len(errs) > 0 {
		return in, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return in, nil
}

// selector returns the namespace, label and field filter of a list or
// watch; bad selectors and unsupported field labels get 400 BadRequest.
func (s *Store) selector(r *resState, ns, labelSelector, fieldSelector string) (func(runtime.Object) bool, error) {
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return s.compileSelector(r, ns, ls, fs)
}

// compileSelector builds the filter of parsed selectors.
func (s *Store) compileSelector(r *resState, ns string, ls labels.Selector, fs fields.Selector) (func(runtime.Object) bool, error) {
	if ls == nil {
		ls = labels.Everything()
	}
	if fs == nil {
		fs = fields.Everything()
	}
	for _, req := range fs.Requirements() {
		if !r.fieldLabels[req.Field] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	if !r.Namespaced {
		ns = ""
	}
	allLabels, allFields := ls.Empty(), fs.Empty()
	return func(obj runtime.Object) bool {
		m := mustAccessor(obj)
		if ns != "" && m.GetNamespace() != ns {
			return false
		}
		if !allLabels && !ls.Matches(labels.Set(m.GetLabels())) {
			return false
		}
		return allFields || fs.Matches(r.fieldSet(obj))
	}, nil
}

// Get returns the current object ns/name. opts.ResourceVersion is honoured
// as kube-apiserver's watch cache does: "" and "0" read the latest; N reads
// the latest if N <= RV(), else gets the Too-large answer.
func (s *Store) Get(gvr schema.GroupVersionResource, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	if v := s.views[gvr]; v != nil {
		return v.get(s, ns, name, opts)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	if rv := opts.ResourceVersion; rv != "" && rv != "0" {
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q: must be an unsigned integer", rv))
		}
		if int64(n) > s.rv {
			return nil, tooLargeResourceVersion(int64(n), s.rv)
		}
	}
	obj, ok := s.load(r, objectKey(requestNamespace(r, ns), name))
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	return obj, nil
}

// continueToken is kube-apiserver's continue token
// (k8s.io/apiserver/pkg/storage: base64url of this JSON).
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// encodeContinue encodes a continue token.
func encodeContinue(startKey string, rv int64) string {
	out, _ := json.Marshal(&continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rv, StartKey: startKey})
	return base64.RawURLEncoding.EncodeToString(out)
}

// decodeContinue decodes a continue token, with storage.DecodeContinue's
// errors.
func decodeContinue(token string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("continue key is not valid: %v", err)
	}
	switch {
	case c.APIVersion != "meta.k8s.io/v1":
		return "", 0, fmt.Errorf("continue key is not valid: server does not recognize this encoded version %q", c.APIVersion)
	case c.ResourceVersion == 0:
		return "", 0, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	case c.StartKey == "":
		return "", 0, fmt.Errorf("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	}
	return c.StartKey, c.ResourceVersion, nil
}

// List lists objects of gvr in ns ("" for all namespaces), as
// kube-apiserver does:
//
//   - resourceVersion "": the latest revision (consistent); replicaLag is
//     ignored.
//   - "0" (match "" or NotOlderThan): any revision: served by a replica
//     replicaLag revisions behind the latest (never below CompactedRV()),
//     limit ignored as the watch cache ignores it.
//   - N with match NotOlderThan (or no match and no limit): the replica's
//     revision (latest-replicaLag) if it is >= N, else 504 Too large
//     resource version.
//   - N with match Exact, or with a limit and no match (kube-apiserver's
//     "legacy exact match", served by etcd): the state at N; 410 Expired
//     below CompactedRV(), 504 Too large above RV().
//
// Label and field selectors filter; limit/continue paginate over the
// snapshot revision (continue tokens carry it; a token older than
// CompactedRV() gets 410 Expired with a fresh token to continue at the
// latest revision, as etcd3 does). The result is a typed list
// (*corev1.PodList, ...) or an *unstructured.UnstructuredList, with
// metadata.resourceVersion, continue and remainingItemCount (when no
// selector filters).
func (s *Store) List(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (runtime.Object, ListInfo, error) {
	if v := s.views[gvr]; v != nil {
		return v.list(s, ns, opts, replicaLag)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, ListInfo{}, err
	}
	ns = requestNamespace(r, ns)
	in, err := parseListOptions(opts, false)
	if err != nil {
		return nil, ListInfo{}, err
	}
	match, err := s.compileSelector(r, ns, in.LabelSelector, in.FieldSelector)
	if err != nil {
		return nil, ListInfo{}, err
	}
	var (
		at       int64
		lag      int64
		startKey string
		limit    = in.Limit
	)
	switch rv := opts.ResourceVersion; {
	case opts.Continue != "":
		key, tokenRV, err := decodeContinue(opts.Continue)
		if err != nil {
			return nil, ListInfo{}, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if rv != "" && rv != "0" {
			return nil, ListInfo{}, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		at, startKey = tokenRV, key
		if tokenRV < 0 {
			at = s.rv
		} else if tokenRV < s.compacted {
			e := apierrors.NewResourceExpired(msgContinueExpired)
			e.ErrStatus.ListMeta.Continue = encodeContinue(key, -1)
			return nil, ListInfo{}, e
		} else if tokenRV > s.rv {
			return nil, ListInfo{}, tooLargeResourceVersion(tokenRV, s.rv)
		}
	case rv == "":
		at = s.rv
	case rv == "0":
		at = s.replicaRV(replicaLag)
		lag, limit = s.rv-at, 0
	default:
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return nil, ListInfo{}, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q: must be an unsigned integer", rv))
		}
		want := int64(n)
		// Exact, and the "legacy exact match" of ShouldDelegateList: a
		// limit with a resourceVersion and no match is served at it.
		if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact || (opts.ResourceVersionMatch == "" && in.Limit > 0) {
			switch {
			case want > s.rv:
				return nil, ListInfo{}, tooLargeResourceVersion(want, s.rv)
			case want < s.compacted:
				return nil, ListInfo{}, apierrors.NewResourceExpired(msgListExpired)
			}
			at = want
			break
		}
		at = s.replicaRV(replicaLag)
		if want > at {
			return nil, ListInfo{}, tooLargeResourceVersion(want, at)
		}
		lag = s.rv - at
	}
	snap := s.snapshotAt(r, ns, at)
	start := 0
	if startKey != "" {
		start = sort.Search(len(snap), func(i int) bool { return snap[i].key >= startKey })
	}
	var picked []runtime.Object
	next := ""
	i := start
	for ; i < len(snap); i++ {
		if limit > 0 && int64(len(picked)) == limit {
			next = snap[i-1].key + "\x00"
			break
		}
		if obj := r.decode(snap[i].data); match(obj) {
			picked = append(picked, obj)
		}
	}
	list, err := s.buildList(r, picked)
	if err != nil {
		return nil, ListInfo{}, apierrors.NewInternalError(err)
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatInt(at, 10))
	if next != "" {
		tokenRV := at
		lm.SetContinue(encodeContinue(next, tokenRV))
		if in.LabelSelector.Empty() && in.FieldSelector.Empty() {
			remaining := int64(len(snap) - i)
			lm.SetRemainingItemCount(&remaining)
		}
	}
	return list, ListInfo{RV: at, Lag: lag, Count: len(picked)}, nil
}

// replicaRV is the revision a replica replicaLag revisions behind serves.
func (s *Store) replicaRV(replicaLag int64) int64 {
	if replicaLag < 0 {
		replicaLag = 0
	}
	return max(s.rv-replicaLag, s.compacted)
}

// buildList returns a list of r's kind holding objs (fresh objects the
// list takes over).
func (s *Store) buildList(r *resState, objs []runtime.Object) (runtime.Object, error) {
	list := r.newList(s)
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		ul.Items = make([]unstructured.Unstructured, len(objs))
		for i, o := range objs {
			ul.Items[i] = *o.(*unstructured.Unstructured)
		}
		return ul, nil
	}
	itemsPtr, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, err
	}
	items := reflect.ValueOf(itemsPtr).Elem()
	slice := reflect.MakeSlice(items.Type(), len(objs), len(objs))
	for i, o := range objs {
		slice.Index(i).Set(reflect.ValueOf(o).Elem())
	}
	items.Set(slice)
	return list, nil
}
