module kubeforge.io/testbed/images

go 1.26
