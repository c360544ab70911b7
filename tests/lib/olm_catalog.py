"""The testbed's OLM v0 catalog as the integration tests point a namespace at it."""

GROUP, V1ALPHA1 = "operators.coreos.com", "v1alpha1"
CATALOG = "testbed-catalog"


def make_catalog(custom, namespace, address, name=CATALOG):
    """A CatalogSource ``name`` (CATALOG) in ``namespace`` pointing at a gRPC registry ``address``."""
    body = {
        "apiVersion": f"{GROUP}/{V1ALPHA1}",
        "kind": "CatalogSource",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"sourceType": "grpc", "address": address, "displayName": "testbed"},
    }
    custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", body)
