"""The CloudLab profile, run as the portal runs it: parameters from a JSON file, the request RSpec
written to a file, parameter errors as JSON on stderr with exit status 100 + their count."""

import ipaddress
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

PROFILE = pathlib.Path(__file__).with_name("profile.py")
NS = {"r": "http://www.geni.net/resources/rspec/3",
      "emulab": "http://www.protogeni.net/resources/rspec/ext/emulab/1"}
UBUNTU_22 = "urn:publicid:IDN+emulab.net+image+emulab-ops//UBUNTU22-64-STD"


def run_profile(tmp_path, **params):
    """(exit status, parsed RSpec root or None, stderr)."""
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "request.xml"
    env = dict(os.environ, GENILIB_PORTAL_MODE="1",
               GENILIB_PORTAL_PARAMS_PATH=str(tmp_path / "params.json"),
               GENILIB_PORTAL_REQUEST_PATH=str(out))
    p = subprocess.run([sys.executable, str(PROFILE)], env=env, capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    root = ET.parse(out).getroot() if p.returncode == 0 else None
    return p.returncode, root, p.stderr


@pytest.mark.parametrize("n", [1, 2, 10, 100])
def test_n_nodes_on_one_lan(tmp_path, n):
    rc, root, err = run_profile(tmp_path, nodeCount=n)
    assert rc == 0, err
    assert root.get("type") == "request"
    nodes = root.findall("r:node", NS)
    assert [x.get("client_id") for x in nodes] == [f"node{i}" for i in range(n)]

    ifaces = {}
    for node in nodes:
        assert node.get("exclusive") == "true"
        sliver = node.findall("r:sliver_type", NS)
        assert [s.get("name") for s in sliver] == ["raw"]
        assert [d.get("name") for d in sliver[0].findall("r:disk_image", NS)] == [UBUNTU_22]
        assert [h.get("name") for h in node.findall("r:hardware_type", NS)] == ["m510"]
        (iface,) = node.findall("r:interface", NS)
        (ip,) = iface.findall("r:ip", NS)
        ifaces[iface.get("client_id")] = ipaddress.ip_interface(
            f"{ip.get('address')}/{ip.get('netmask')}")

    (lan,) = root.findall("r:link", NS)
    refs = [r.get("client_id") for r in lan.findall("r:interface_ref", NS)]
    assert sorted(refs) == sorted(ifaces) and len(set(refs)) == n
    assert [t.get("name") for t in lan.findall("r:link_type", NS)] == ["lan"]
    assert lan.find("emulab:best_effort", NS).get("enabled") == "true"
    # One subnet, one address each.
    assert {i.network for i in ifaces.values()} == {ipaddress.ip_network("10.10.1.0/24")}
    assert len({i.ip for i in ifaces.values()}) == n


def test_hardware_type_and_image_are_the_parameters(tmp_path):
    image = "urn:publicid:IDN+wisc.cloudlab.us+image+emulab-ops//UBUNTU20-64-STD"
    rc, root, err = run_profile(tmp_path, nodeCount=3, phystype="c220g5", osImage=image)
    assert rc == 0, err
    nodes = root.findall("r:node", NS)
    assert len(nodes) == 3
    for node in nodes:
        assert node.find("r:hardware_type", NS).get("name") == "c220g5"
        assert node.find("r:sliver_type/r:disk_image", NS).get("name") == image
    # The portal records the bound values in the request.
    items = {d.get("name").rsplit(".", 1)[1]: d.text
             for d in root.iter("{http://www.protogeni.net/resources/rspec/ext/profile-parameters/1}data_item")}
    assert items == {"nodeCount": "3", "phystype": "c220g5", "osImage": image}


@pytest.mark.parametrize("params, param, message", [
    ({"nodeCount": 0}, "nodeCount", "nodeCount must be between 1 and 100, not 0"),
    ({"nodeCount": 101}, "nodeCount", "nodeCount must be between 1 and 100, not 101"),
    ({"nodeCount": 3, "phystype": "m400"}, "phystype", "Illegal value 'm400'"),
    ({"nodeCount": 3, "phystype": "no-such-type"}, "phystype", "Illegal value 'no-such-type'"),
    ({"nodeCount": 3, "osImage": "UBUNTU22-64-STD"}, "osImage",
     "osImage must be an image URN (urn:publicid:IDN+...), not 'UBUNTU22-64-STD'"),
])
def test_bad_parameters_are_refused_by_name(tmp_path, params, param, message):
    rc, root, err = run_profile(tmp_path, **params)
    assert rc == 101, err
    assert root is None and not (tmp_path / "request.xml").exists()
    (error,) = json.loads(err)
    assert error["errorType"] == "ParameterError"
    assert error["params"] == [param]
    assert error["message"] == message
