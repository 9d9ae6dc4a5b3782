"""A tau-bench-like retail env (one `data` dict of records), written to public tool-class conventions.

Not shaped for envforge: tools index the data dict by their arguments, loop over records, raise
ValueError for bad input, as tau-bench's retail tools do.
"""

from __future__ import annotations

from typing import Any


class RetailEnv:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {"users": {}, "orders": {}, "products": {}}
        self.log: list[str] = []

    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """Get a user's profile."""
        if user_id not in self.data["users"]:
            raise ValueError("User not found")
        return self.data["users"][user_id]

    def find_orders(self, user_id: str) -> list[str]:
        """List the ids of a user's orders."""
        if user_id not in self.data["users"]:
            raise ValueError("User not found")
        return list(self.data["users"][user_id]["orders"])

    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """Get an order's status and items."""
        if order_id not in self.data["orders"]:
            raise ValueError("Order not found")
        return self.data["orders"][order_id]

    def order_total(self, order_id: str) -> float:
        """Sum an order's item prices."""
        order = self.data["orders"][order_id]
        return round(sum(item["price"] for item in order["items"]), 2)

    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order."""
        order = self.data["orders"].get(order_id)
        if order is None:
            raise ValueError("Order not found")
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        return order

    def refund_order(self, order_id: str) -> float:
        """Refund a cancelled order to its user's store credit."""
        order = self.data["orders"].get(order_id)
        if order is None or order["status"] != "cancelled":
            raise ValueError("Only a cancelled order can be refunded")
        user = self.data["users"][order["user_id"]]
        amount = round(sum(item["price"] for item in order["items"]), 2)
        user["credit"] = round(user.get("credit", 0) + amount, 2)
        order["status"] = "refunded"
        return amount

    def modify_user_address(self, user_id: str, address: str) -> dict[str, Any]:
        """Change a user's address."""
        user = self.data["users"][user_id]
        user["address"] = {"line": address}
        return user

    def add_order_item(self, order_id: str, product_id: str) -> dict[str, Any]:
        """Add one product to an order."""
        if product_id not in self.data["products"]:
            raise ValueError("Unknown product")
        order = self.data["orders"][order_id]
        order["items"].append({"product_id": product_id, "price": self.data["products"][product_id]["price"]})
        return order

    def place_order(self, order_id: str, user_id: str) -> str:
        """Create an empty pending order."""
        if order_id in self.data["orders"]:
            raise ValueError("Order exists")
        user = self.data["users"].get(user_id)
        if user is None:
            raise ValueError("User not found")
        self.data["orders"][order_id] = {"user_id": user_id, "status": "pending", "items": []}
        user["orders"].append(order_id)
        return order_id

    def delete_order(self, order_id: str) -> bool:
        """Remove an order."""
        order = self.data["orders"].pop(order_id)
        user = self.data["users"][order["user_id"]]
        user["orders"].remove(order_id)
        return True

    def note(self, text: str) -> int:
        """Append to the log (a second attribute)."""
        self.log.append(text)
        return len(self.log)


def retail_state(n: int) -> dict[str, Any]:
    """A state with n users, n products and 2n orders (each user has orders O{i} and O{i+n})."""
    users = {f"U{i}": {"name": f"user {i}", "address": {"line": f"{i} Main St"}, "tags": ["a", "b"],
                       "orders": [f"O{i}", f"O{i + n}"]} for i in range(n)}
    products = {f"P{i}": {"name": f"product {i}", "price": 10 + i % 7, "stock": i % 5} for i in range(n)}
    orders = {f"O{i}": {"user_id": f"U{i % max(n, 1)}", "status": "pending" if i % 2 else "delivered",
                        "items": [{"product_id": f"P{i % max(n, 1)}", "price": 3.5}]} for i in range(2 * n)}
    return {"data": {"users": users, "orders": orders, "products": products}, "log": []}
