alert("not on the allow-list");
