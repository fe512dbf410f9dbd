"""Tidal on Hadoop 2.7.7 YARN: N bare-metal x86_64 nodes on one LAN.

node0 becomes the ResourceManager and HDFS NameNode, the other nodes NodeManagers and DataNodes
(with one node, node0 is all of them). The nodes boot a stock Ubuntu image; the deployment
playbook in the Tidal repository (it-tests/cloudlab) installs a JDK where one is missing, pushes
Hadoop with Tidal to every node, starts the daemons and runs the workload.

Instructions:
Wait for every node to be ready, download the manifest (List View, or the portal's
"Manifest" tab) and follow "Running on CloudLab" in the Tidal repository's docs/operations.md: `inventory.py` turns the
manifest into an Ansible inventory and `deploy.yml` does the rest.
"""

import geni.portal as portal
import geni.rspec.pg as pg

MAX_NODES = 100
# x86_64 bare-metal types only: libtidal_jni.so is built for Linux x86_64 (glibc).
HARDWARE_TYPES = [
    ("m510", "m510 (Utah, 8 cores, 64 GB)"),
    ("xl170", "xl170 (Utah, 10 cores, 64 GB)"),
    ("c6525-25g", "c6525-25g (Utah, 16 cores, 128 GB)"),
    ("c220g1", "c220g1 (Wisconsin, 16 cores, 128 GB)"),
    ("c220g2", "c220g2 (Wisconsin, 20 cores, 160 GB)"),
    ("c220g5", "c220g5 (Wisconsin, 20 cores, 192 GB)"),
    ("c240g5", "c240g5 (Wisconsin, 20 cores, 192 GB)"),
    ("c6320", "c6320 (Clemson, 28 cores, 256 GB)"),
    ("c6420", "c6420 (Clemson, 32 cores, 384 GB)"),
    ("d430", "d430 (Emulab, 16 cores, 64 GB)"),
]
UBUNTU_22 = "urn:publicid:IDN+emulab.net+image+emulab-ops//UBUNTU22-64-STD"
LAN_PREFIX = "10.10.1."

pc = portal.Context()
pc.defineParameter(
    "nodeCount", "Number of nodes (1 to %d)" % MAX_NODES, portal.ParameterType.INTEGER, 3,
    longDescription="node0 runs the ResourceManager and NameNode; the others NodeManagers and "
    "DataNodes. With one node, node0 runs all four.")
pc.defineParameter(
    "phystype", "Hardware type", portal.ParameterType.NODETYPE, HARDWARE_TYPES[0][0],
    legalValues=HARDWARE_TYPES)
pc.defineParameter(
    "osImage", "Disk image", portal.ParameterType.IMAGE, UBUNTU_22,
    longDescription="An Ubuntu image with apt (the playbook installs OpenJDK 17 from it).")
params = pc.bindParameters()

# Bound parameters are range-checked here, with the portal's own error type so that it shows
# the message next to the parameter; the hardware type is checked by its list of legal values.
if not 1 <= params.nodeCount <= MAX_NODES:
    pc.reportError(portal.ParameterError(
        "nodeCount must be between 1 and %d, not %d" % (MAX_NODES, params.nodeCount),
        ["nodeCount"]))
if not params.osImage.startswith("urn:publicid:IDN+"):
    pc.reportError(portal.ParameterError(
        "osImage must be an image URN (urn:publicid:IDN+...), not '%s'" % params.osImage,
        ["osImage"]))
pc.verifyParameters()

request = pc.makeRequestRSpec()
lan = request.LAN("lan")
# Best effort: a LAN of many nodes spans switches whose trunks cannot guarantee every link's
# full rate; Hadoop's traffic needs no reservation.
lan.best_effort = True
for i in range(params.nodeCount):
    node = request.RawPC("node%d" % i)
    node.hardware_type = params.phystype
    node.disk_image = params.osImage
    iface = node.addInterface("if1")
    iface.addAddress(pg.IPv4Address(LAN_PREFIX + str(i + 1), "255.255.255.0"))
    lan.addInterface(iface)

pc.printRequestRSpec(request)
