"""inventory.py: a CloudLab manifest or a host list to the inventory deploy.yml takes, read back
by Ansible itself."""

import json
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import inventory  # noqa: E402


def manifest(n, users=("alice", "bob")):
    """A manifest as CloudLab returns it for the profile: each node with its LAN interface, one
    ssh login per project member and its control-network host name (listed out of order)."""
    nodes = []
    for i in reversed(range(n)):
        logins = "".join(
            f'<login authentication="ssh-keys" hostname="pc{500 + i}.emulab.net" port="22" '
            f'username="{u}"/>' for u in users)
        nodes.append(f"""
  <node client_id="node{i}" component_id="urn:publicid:IDN+emulab.net+node+pc{500 + i}"
        exclusive="true">
    <sliver_type name="raw-pc"><disk_image name="urn:publicid:IDN+emulab.net+image+emulab-ops//UBUNTU22-64-STD"/></sliver_type>
    <hardware_type name="m510"/>
    <interface client_id="node{i}:if1" mac_address="02aabbcc00{i:02d}">
      <ip address="10.10.1.{i + 1}" type="ipv4" netmask="255.255.255.0"/>
    </interface>
    <services>{logins}</services>
    <host name="node{i}.tidal.proj.emulab.net" ipv4="155.98.36.{i + 10}"/>
  </node>""")
    return f"""<?xml version="1.0"?>
<rspec xmlns="http://www.geni.net/resources/rspec/3" type="manifest">{''.join(nodes)}
  <link client_id="lan"/>
</rspec>"""


def test_manifest_first_node_is_the_resourcemanager():
    hosts = inventory.hosts_from_manifest(manifest(12), user="bob")
    inv = inventory.inventory(hosts, "/opt/tidal")["all"]
    names = [f"node{i}" for i in range(12)]
    assert list(inv["hosts"]) == names  # node2 before node10
    assert list(inv["children"]["resourcemanager"]["hosts"]) == ["node0"]
    assert list(inv["children"]["workers"]["hosts"]) == names[1:]
    assert inv["hosts"]["node11"] == {
        "ansible_host": "pc511.emulab.net", "ansible_port": 22, "ansible_user": "bob",
        "lan_ip": "10.10.1.12", "tidal_dir": "/opt/tidal"}


def test_one_node_is_resourcemanager_and_worker():
    inv = inventory.inventory(inventory.hosts_from_manifest(manifest(1)), "/opt/tidal")["all"]
    assert list(inv["children"]["resourcemanager"]["hosts"]) == ["node0"]
    assert list(inv["children"]["workers"]["hosts"]) == ["node0"]
    assert inv["hosts"]["node0"]["ansible_user"] == "alice"  # the first login without --user


def test_host_list_with_separate_install_dirs():
    hosts = inventory.hosts_from_args(["a=10.0.0.5", "b=127.0.0.1/10.0.0.6"], "root", 2222)
    inv = inventory.inventory(hosts, "/srv/{host}/tidal", key="/k")["all"]
    assert inv["vars"] == {"ansible_ssh_private_key_file": "/k"}
    assert inv["hosts"]["b"] == {"ansible_host": "127.0.0.1", "ansible_port": 2222,
                                 "ansible_user": "root", "lan_ip": "10.0.0.6",
                                 "tidal_dir": "/srv/b/tidal"}
    assert inv["hosts"]["a"]["lan_ip"] == "10.0.0.5"


@pytest.mark.parametrize("call, message", [
    (lambda: inventory.hosts_from_manifest("<rspec"), "the manifest is not XML"),
    (lambda: inventory.hosts_from_manifest(
        manifest(2).replace('type="manifest"', 'type="request"')), "not a manifest RSpec"),
    (lambda: inventory.hosts_from_manifest(manifest(2), user="carol"),
     "has no ssh login for user carol in the manifest"),
    (lambda: inventory.hosts_from_manifest(
        '<rspec xmlns="http://www.geni.net/resources/rspec/3" type="manifest"/>'),
     "the manifest has no nodes"),
    (lambda: inventory.hosts_from_args(["node0:10.0.0.1"], None, 22),
     "--host takes NAME=ADDRESS[/LAN_IP], not 'node0:10.0.0.1'"),
    (lambda: inventory.inventory(inventory.hosts_from_args(["a=h/10.0.0.1", "a=h/10.0.0.2"], None, 22),
                                 "/x"), "host names must be unique: a"),
    (lambda: inventory.inventory(inventory.hosts_from_args(["a=h/lan"], None, 22), "/x"),
     "host a: LAN address 'lan' is not an IPv4 address"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(inventory.InventoryError) as e:
        call()
    assert message in str(e.value)


def test_ansible_reads_the_inventory(tmp_path):
    (tmp_path / "manifest.xml").write_text(manifest(3))
    out = subprocess.run([sys.executable, str(HERE / "inventory.py"), "--manifest",
                          str(tmp_path / "manifest.xml"), "--user", "alice"],
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "inventory.json").write_text(out)
    listed = json.loads(subprocess.run(
        [str(pathlib.Path(sys.executable).with_name("ansible-inventory")), "-i",
         str(tmp_path / "inventory.json"), "--list"],
        capture_output=True, text=True, check=True).stdout)
    assert listed["resourcemanager"]["hosts"] == ["node0"]
    assert sorted(listed["workers"]["hosts"]) == ["node1", "node2"]
    assert listed["_meta"]["hostvars"]["node2"]["lan_ip"] == "10.10.1.3"


def test_cli_error_exits_with_the_message(tmp_path):
    p = subprocess.run([sys.executable, str(HERE / "inventory.py"), "--manifest",
                        str(tmp_path / "missing.xml")], capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr.startswith("inventory.py: ") and "missing.xml" in p.stderr
