"""The NATS cluster helper itself: three nodes with JetStream, and a cluster that keeps
answering after `kill -9` of one node."""
from nats_cluster import NatsCluster, jetstream_info


def test_a_cluster_answers_on_every_node_and_survives_the_loss_of_one():
    with NatsCluster.start() as cluster:
        assert len(cluster.urls) == 3
        for port in cluster.client_ports:
            assert "error" not in jetstream_info(port)
        cluster.kill(0)
        assert 0 not in cluster.processes
        # The meta layer re-elects if its leader was node 0; the survivors answer again.
        cluster.wait_for_jetstream(20)
