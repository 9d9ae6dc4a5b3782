"""An online store in the EnvScaler class convention: state in instance attributes, dict results."""

from typing import Dict, List, Optional, TypedDict


class ProductInfo(TypedDict):
    product_id: str
    name: str
    category: str
    price: float
    stock: int
    active: bool


class CartItem(TypedDict):
    product_id: str
    quantity: int


class CustomerInfo(TypedDict):
    customer_id: str
    name: str
    email: str
    tier: str
    loyalty_points: int
    total_spent: float
    order_count: int
    address: str
    cart: List[CartItem]


class OrderInfo(TypedDict):
    order_id: str
    customer_id: str
    items: List[dict]
    subtotal: float
    discount: float
    total: float
    coupon_code: Optional[str]
    status: str
    placed_at: str
    address: str


class CouponInfo(TypedDict):
    code: str
    percent_off: int
    min_subtotal: float
    uses_left: int


class OnlineStore:
    def __init__(self, init_config: dict):
        """An online shop: catalogue, customers with carts, orders and coupons."""
        # Rules: only active products with enough stock can be bought; a cart holds at most
        # 10 units of one product; orders can be cancelled until shipped; gold customers get
        # double loyalty points (1 point per whole currency unit otherwise).
        self.products: Dict[str, ProductInfo] = {}
        self.customers: Dict[str, CustomerInfo] = {}
        self.orders: Dict[str, OrderInfo] = {}
        self.coupons: Dict[str, CouponInfo] = {}
        self.current_time: str = "2026-03-02T10:00:00"
        self.next_order_number: int = 1

    def get_product(self, product_id: str) -> dict:
        """Get a product's details.

        Args:
            product_id: The product, such as 'SKU-100'.
        """
        if product_id not in self.products:
            return {"success": False, "error": f"Product {product_id} not found"}
        return {"success": True, "data": self.products[product_id]}

    def search_products(self, keyword: str, category: Optional[str] = None) -> dict:
        """Find active products whose name contains the keyword.

        Args:
            keyword: Text to look for, such as 'mug'.
            category: Only this category, such as 'kitchen'.
        """
        keyword = keyword.lower().strip()
        found = [p for p in self.products.values()
                 if p["active"] and keyword in p["name"].lower() and (category is None or p["category"] == category)]
        return {"success": True, "data": found}

    def get_customer(self, customer_id: str) -> dict:
        """Get a customer's profile and cart.

        Args:
            customer_id: The customer, such as 'U1'.
        """
        if customer_id not in self.customers:
            return {"error": f"Customer {customer_id} not found"}
        return {"success": True, "data": self.customers[customer_id]}

    def get_order(self, order_id: str) -> dict:
        """Get an order.

        Args:
            order_id: The order, such as 'O-1001'.
        """
        if order_id not in self.orders:
            return {"success": False, "error": f"Order {order_id} not found"}
        return {"success": True, "data": self.orders[order_id]}

    def add_to_cart(self, customer_id: str, product_id: str, quantity: int = 1) -> dict:
        """Put units of a product into a customer's cart (at most 10 units of one product).

        Args:
            customer_id: The customer, such as 'U1'.
            product_id: The product, such as 'SKU-100'.
            quantity: Units to add, 1 to 10, such as 2.
        """
        if customer_id not in self.customers:
            return {"success": False, "error": f"Customer {customer_id} not found"}
        if product_id not in self.products:
            return {"success": False, "error": f"Product {product_id} not found"}
        product = self.products[product_id]
        if not product["active"]:
            return {"success": False, "error": f"Product {product_id} is no longer sold"}
        if quantity < 1:
            return {"success": False, "error": "Quantity must be at least 1"}
        cart = self.customers[customer_id]["cart"]
        in_cart = sum(item["quantity"] for item in cart if item["product_id"] == product_id)
        if in_cart + quantity > 10:
            return {"success": False, "error": "At most 10 units of one product per cart"}
        if in_cart + quantity > product["stock"]:
            return {"success": False, "error": f"Only {product['stock']} units of {product_id} in stock"}
        for item in cart:
            if item["product_id"] == product_id:
                item["quantity"] += quantity
                break
        else:
            cart.append({"product_id": product_id, "quantity": quantity})
        return {"success": True, "message": f"Added {quantity} x {product['name']} to the cart"}

    def remove_from_cart(self, customer_id: str, product_id: str) -> dict:
        """Take a product out of a customer's cart.

        Args:
            customer_id: The customer, such as 'U1'.
            product_id: The product, such as 'SKU-100'.
        """
        if customer_id not in self.customers:
            return {"success": False, "error": f"Customer {customer_id} not found"}
        customer = self.customers[customer_id]
        kept = [item for item in customer["cart"] if item["product_id"] != product_id]
        if len(kept) == len(customer["cart"]):
            return {"success": False, "error": f"Product {product_id} is not in the cart"}
        customer["cart"] = kept
        return {"success": True, "message": f"Removed {product_id} from the cart"}

    def checkout(self, customer_id: str, coupon_code: Optional[str] = None) -> dict:
        """Turn a customer's cart into an order: take stock, apply a coupon, award loyalty points.

        Args:
            customer_id: The customer, such as 'U1'.
            coupon_code: Optional coupon, such as 'SPRING10'.
        """
        if customer_id not in self.customers:
            return {"success": False, "error": f"Customer {customer_id} not found"}
        customer = self.customers[customer_id]
        if not customer["cart"]:
            return {"success": False, "error": "The cart is empty"}
        if not customer["address"]:
            return {"success": False, "error": "No shipping address on file"}
        for item in customer["cart"]:
            product = self.products.get(item["product_id"])
            if product is None or not product["active"]:
                return {"success": False, "error": f"Product {item['product_id']} is no longer sold"}
            if item["quantity"] > product["stock"]:
                return {"success": False, "error": f"Only {product['stock']} units of {item['product_id']} in stock"}
        lines = [{"product_id": i["product_id"], "quantity": i["quantity"],
                  "unit_price": self.products[i["product_id"]]["price"]} for i in customer["cart"]]
        subtotal = round(sum(line["quantity"] * line["unit_price"] for line in lines), 2)
        discount = 0.0
        if coupon_code is not None:
            coupon = self.coupons.get(coupon_code)
            if coupon is None or coupon["uses_left"] <= 0:
                return {"success": False, "error": f"Coupon {coupon_code} is not valid"}
            if subtotal < coupon["min_subtotal"]:
                return {"success": False, "error": f"Coupon {coupon_code} needs a subtotal of {coupon['min_subtotal']}"}
            discount = round(subtotal * coupon["percent_off"] / 100, 2)
            coupon["uses_left"] -= 1
        total = round(subtotal - discount, 2)
        order_id = f"O-{1000 + self.next_order_number}"
        self.next_order_number += 1
        for line in lines:
            self.products[line["product_id"]]["stock"] -= line["quantity"]
        self.orders[order_id] = {
            "order_id": order_id, "customer_id": customer_id, "items": lines, "subtotal": subtotal,
            "discount": discount, "total": total, "coupon_code": coupon_code, "status": "placed",
            "placed_at": self.current_time, "address": customer["address"],
        }
        points = int(total) * (2 if customer["tier"] == "gold" else 1)
        customer["loyalty_points"] += points
        customer["total_spent"] = round(customer["total_spent"] + total, 2)
        customer["order_count"] += 1
        customer["cart"] = []
        return {"success": True, "data": {"order_id": order_id, "total": total, "points": points}}

    def cancel_order(self, order_id: str) -> dict:
        """Cancel an order that has not shipped: restock it and take back its loyalty points.

        Args:
            order_id: The order, such as 'O-1001'.
        """
        order = self.orders.get(order_id)
        if order is None:
            return {"success": False, "error": f"Order {order_id} not found"}
        if order["status"] != "placed":
            return {"success": False, "error": f"Order {order_id} is {order['status']} and cannot be cancelled"}
        customer = self.customers[order["customer_id"]]
        for line in order["items"]:
            if line["product_id"] in self.products:
                self.products[line["product_id"]]["stock"] += line["quantity"]
        points = int(order["total"]) * (2 if customer["tier"] == "gold" else 1)
        customer["loyalty_points"] = max(customer["loyalty_points"] - points, 0)
        customer["total_spent"] = round(customer["total_spent"] - order["total"], 2)
        order["status"] = "cancelled"
        return {"success": True, "message": f"Order {order_id} cancelled"}

    def ship_order(self, order_id: str, carrier: str) -> dict:
        """Mark a placed order as shipped.

        Args:
            order_id: The order, such as 'O-1001'.
            carrier: Shipping company, such as 'DHL'.
        """
        if order_id not in self.orders:
            raise ValueError(f"Order {order_id} not found")
        order = self.orders[order_id]
        if order["status"] != "placed":
            raise ValueError(f"Order {order_id} is {order['status']}")
        order["status"] = "shipped"
        order["carrier"] = carrier
        return {"success": True, "message": f"Order {order_id} shipped with {carrier}"}

    def update_address(self, customer_id: str, address: str) -> dict:
        """Change a customer's shipping address (future orders only).

        Args:
            customer_id: The customer, such as 'U2'.
            address: The full postal address, such as '12 Quay St, Dublin'.
        """
        if customer_id not in self.customers:
            return {"success": False, "error": f"Customer {customer_id} not found"}
        if len(address.strip()) < 5:
            return {"success": False, "error": "Address is too short"}
        self.customers[customer_id]["address"] = address.strip()
        return {"success": True, "message": "Address updated"}
