package http_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// Example serves a fakeapi.Server through the in-memory pipe to client-go's
// typed clientset. Inside a synctest bubble, create the server and the pipe
// in the bubble and Close the pipe before it ends.
func Example() {
	srv := fakeapi.NewServer(fakeapi.Options{})
	pipe := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
	defer pipe.Close()

	cs, err := pipe.Clientset("example")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{})
	fmt.Println("create namespace:", err)
	_, err = cs.CoreV1().ConfigMaps("demo").Get(ctx, "missing", metav1.GetOptions{})
	fmt.Println("get missing configmap is NotFound:", apierrors.IsNotFound(err))
	// Output:
	// create namespace: <nil>
	// get missing configmap is NotFound: true
}
