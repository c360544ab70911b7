module kubeforge.io/testbed/programs

go 1.26
